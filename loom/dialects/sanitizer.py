OPS = ()
