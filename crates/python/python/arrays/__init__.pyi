from arrays import k2 as k2

__version__: str
