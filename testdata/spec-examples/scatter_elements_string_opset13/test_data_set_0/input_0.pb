
2a2b2cBdata