"""The model backends under the :class:`amp.parser.Parser` facade, one module each.

:mod:`.local` runs a model in this process (transformers); :mod:`.remote` is a client of the
parser service.  Each implements :class:`amp.parser.backend.Backend`; a new engine is a new
module here.
"""
