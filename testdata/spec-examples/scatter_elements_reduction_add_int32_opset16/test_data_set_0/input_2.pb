
*
(2<Bupdates