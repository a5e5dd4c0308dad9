"""Language models: what a model spec names, loading it, and the bounded memo of loaded models.

:mod:`.spec` (specs and identities in cache keys), :mod:`.names` (a name checked before loading), :mod:`.embedded` (the embedded Gemma 3 270M,
assembled and converted once), :mod:`.loading` (transformers, GGUF files, devices and dtypes),
:mod:`.quantize` (the int8 CPU precision) and :mod:`.registry` (one loaded model per spec,
device and dtype in this process).  Importing this package does not import torch.
"""
