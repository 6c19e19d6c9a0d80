
BupdatesJмл▄?ff@