
2x2b2zBoutput