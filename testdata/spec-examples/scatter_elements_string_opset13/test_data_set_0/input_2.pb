
2z2xBupdates