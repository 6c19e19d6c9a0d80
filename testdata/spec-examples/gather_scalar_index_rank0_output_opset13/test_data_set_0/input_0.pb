
:
(Bdata