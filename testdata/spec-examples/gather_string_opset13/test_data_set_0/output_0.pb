
2gamma2alpha2βeta2βetaBoutput