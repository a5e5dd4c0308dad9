"""The model backends under the :class:`amp.parser.Parser` facade, one module each.

:mod:`.local` runs a model in this process (the transformers engine), :mod:`.llama` a GGUF in this
process (the llama.cpp engine); :mod:`.remote` is a client of the parser service, :mod:`.api` of a
model behind an OpenAI-compatible endpoint.  Each implements :class:`amp.parser.backend.Backend`;
a new engine is a new module here and one :func:`amp.parser.engines.register_engine` call.
"""
