"""The sparse constant-operator backend: a constant frame state's reduced operators stepped in
Python (generalized-alpha, implicit midpoint) with one factorization, no TS."""
