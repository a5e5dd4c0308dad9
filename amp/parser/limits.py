"""Bounds on one request, shared by the library, the CLI, the app and the parser service.

One declaration each; :func:`check_search` and friends raise :class:`RequestTooLarge` with a
message naming the bound, so every front end shows the same sentence.
"""

from __future__ import annotations

from amp.errors import AmpError

#: Beams of one search (the distinct top-k method uses up to this width).
MAX_BEAMS = 64
#: Generation budget of one search.
MAX_NEW_TOKENS = 1024
#: Characters of one prompt (checked before tokenising).
MAX_PROMPT_CHARS = 200_000
#: Characters of one LF.
MAX_LF_CHARS = 20_000
#: Prompts / items in one batched call.
MAX_BATCH_ITEMS = 256
#: LFs scored after one prompt in one call.
MAX_FORCED_LFS = 64
#: Samples of one sampling call.
MAX_SAMPLES = 500
#: Items of one sweep job.
MAX_JOB_ITEMS = 50_000
#: Items per model call inside a job.
MAX_JOB_BATCH = 64
#: Bytes of one request body to the parser service.
MAX_BODY_BYTES = 64 * 2**20


class RequestTooLarge(AmpError, ValueError):
    """A request over one of the bounds of this module."""
