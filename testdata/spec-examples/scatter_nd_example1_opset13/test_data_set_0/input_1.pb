
:Bindices