:
(Bdata