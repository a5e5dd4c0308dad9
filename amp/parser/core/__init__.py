"""What every floor of the parser shares: result records, errors and request bounds.

:mod:`.results` (beams, forced and pair scores, token steps, batch items, job status, the
backend's ``Runtime``), :mod:`.errors` (every error the parser raises on purpose) and
:mod:`.limits` (one bound per setting, shared by the library, the CLI, the app and the service).
"""
