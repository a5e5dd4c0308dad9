"""The code part of every result-cache key: a digest of the source of the modules that compute results.

:func:`code_digest` hashes the text of :data:`CODE_MODULES` (decoding, scoring, the grammar
automaton, the grammar, the prompts, the record layouts …) once per process;
:meth:`amp.cache.ResultCache.key` puts it, with :data:`CODE_VERSION`, into every key.  Any edit
to one of those modules changes every key, so results stored by other code are never found.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

#: Part of every key, next to :func:`code_digest`.  Bumping it is only needed for a change that
#: lives outside :data:`CODE_MODULES` (e.g. a dependency's behaviour).
CODE_VERSION = "amp-parser-3"  # 2: bound-variable constrained decoding; 3: no dead-end states, one shared prompt pass

#: The ``amp`` package folder; :data:`CODE_MODULES` are relative to it.
PACKAGE_DIR = Path(__file__).resolve().parent

#: The modules whose source decides what a cached result holds (paths relative to the ``amp``
#: package): constrained decoding and its automaton and vocabulary masks, forced scoring,
#: sampling, the prompt pass, the record layouts (and :mod:`amp.records`, which encodes them), divergence, batching, the in-process backend
#: and the facade that encodes records, the LF grammar (and the lexicon it is built from) and
#: the prompt builders.  Their text is hashed into every key (:func:`code_digest`).  Left out on
#: purpose: the model modules (``parser/models/``: ``spec.py``, ``embedded.py``, ``loading.py``,
#: ``registry.py``; a model's weights and tokenizer are identified by their own hashes in the key), the backend interface, the search settings record (its values are in the key), the errors,
#: and the remote client/service transport (they move results, they do not compute them).
CODE_MODULES: tuple[str, ...] = (
    "parser/search/automaton.py",
    "parser/search/beam_rows.py",
    "parser/search/beam_step.py",
    "parser/search/cell_decoder.py",
    "parser/search/cell_search.py",
    "parser/search/cancel.py",
    "parser/search/decode.py",
    "parser/search/divergence.py",
    "parser/search/fastsearch.py",
    "parser/search/gradients.py",
    "parser/search/lalr_tables.py",
    "parser/search/prefix.py",
    "parser/search/prefix_states.py",
    "parser/search/processors.py",
    "parser/search/sampling.py",
    "parser/search/scoring.py",
    "parser/search/top_k.py",
    "parser/search/vocab.py",
    "parser/models/quantize.py",
    "parser/models/gguf_cells.py",
    "parser/backends/local.py",
    "parser/backends/llama.py",
    "parser/backends/api.py",
    "parser/backends/api_protocol.py",
    "parser/backends/api_replies.py",
    "parser/backends/api_probe.py",
    "parser/batch.py",
    "parser/parser.py",
    "parser/core/results.py",
    "parser/core/attribution_settings.py",
    "evaluation/attribution.py",
    "evaluation/interpretations.py",
    "evaluation/matching.py",
    "detection/auroc.py",
    "detection/dataset.py",
    "detection/hidden_states.py",
    "detection/probe.py",
    "detection/signals.py",
    "logic/grammar.py",
    "logic/gbnf.py",
    "logic/lexicon.py",
    "prompts.py",
    "records.py",
)


def source_digest(package_dir: Path, modules: tuple[str, ...] = CODE_MODULES) -> str:
    """sha256 over the names and bytes of ``modules`` under ``package_dir``.

    A missing module raises ``FileNotFoundError``: a renamed file must be renamed in
    :data:`CODE_MODULES` too, never silently dropped from the key.
    """
    digest = hashlib.sha256()
    for rel in sorted(modules):
        data = (package_dir / rel).read_bytes()
        digest.update(f"{rel}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


@lru_cache(maxsize=4)
def _cached_digest(package_dir: Path, modules: tuple[str, ...]) -> str:
    return source_digest(package_dir, modules)


def code_digest() -> str:
    """The digest of :data:`CODE_MODULES` in :data:`PACKAGE_DIR`, read once per process.

    Once per process on purpose: the code a process runs is the code it imported, so a source
    file edited while the app runs must not change the keys its (old) code writes under.  Two
    processes on the same source (the app and a remote worker, the CLI and the app) compute the
    same digest.
    """
    return _cached_digest(PACKAGE_DIR, CODE_MODULES)
