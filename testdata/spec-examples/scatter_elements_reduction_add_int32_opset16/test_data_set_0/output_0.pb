
*67`Boutput