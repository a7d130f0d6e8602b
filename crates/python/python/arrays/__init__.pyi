from arrays import image as image
from arrays import k2 as k2
from arrays import kaldi as kaldi
from arrays import structured as structured

__version__: str
