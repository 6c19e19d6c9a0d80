*
(2<Bupdates