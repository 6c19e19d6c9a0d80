
:Bshape