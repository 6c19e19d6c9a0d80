
2alpha2βeta2gammaBdata