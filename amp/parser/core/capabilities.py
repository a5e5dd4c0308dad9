"""What a backend can do, as one typed record: :class:`Capabilities`.

Every backend answers :meth:`amp.parser.backend.Backend.capabilities` with one, and every
"can this engine/backend …?" question in the code is asked of it — never of a class, an attribute
looked up by name or a dtype: whether P(LF0) can be scored (:attr:`amp.parser.Parser.scores`), how
many sweep items go into one model call (:func:`amp.parser.batch.default_batch_size`), whether
gradients flow (attribution), whether the search may leave the grammar, which devices and
precisions an engine takes and which model files it runs (:mod:`amp.parser.engines`).

An engine of this process declares its record once, next to its backend; the parser service
reports its own engine's in ``/v1/info`` (a client of it computes no gradients); a model behind an
API scores only where its endpoint gives prompt log-probs.
"""

from __future__ import annotations

from dataclasses import dataclass

from amp.records import JsonRecord

#: The model kinds a spec resolves to (:attr:`amp.parser.models.spec.ModelSource.kind`): the
#: embedded model, a ``save_pretrained`` folder, a ``.gguf`` file, a Hugging Face id.
MODEL_KINDS: tuple[str, ...] = ("default", "folder", "gguf", "hub")


@dataclass(frozen=True)
class Capabilities(JsonRecord):
    """What a backend (or an engine, before any backend exists) can do.

    ``engine``: the engine that computes (a name of :mod:`amp.parser.engines`; a client of the
    parser service reports its service's; ``""`` for a model behind an API).
    ``gradients``: the weights are in this process and give gradients (contrastive attribution).
    ``scores``: forced scoring of an LF (P(LF0)) works.
    ``unconstrained``: the search may run without the grammar (``--unconstrained``).
    ``batch_size``: sweep items per model call (for a model behind an API: its requests in flight).
    ``devices``: the device kinds it runs on (``cpu``, ``cuda``, ``mps``); empty where the device is
    not chosen here (a service's, an endpoint's).
    ``formats``: the model kinds it runs (:data:`MODEL_KINDS`); empty where it runs no model file here.
    ``precisions``: the dtypes it can be asked for (``--dtype``); empty where it computes in one
    precision of its own.
    ``own_precision``: it computes in the model file's own precision, which its dtype names (the
    llama.cpp engine: ``llama.cpp-<build>``), so run names carry that dtype.
    ``no_scores_reason``: where ``scores`` is False, why, in words for people (a model behind an API
    without prompt log-probs says which setting or endpoint lacks them); ``""`` otherwise.
    ``shares_prefixes``: a prompt keeps the cells of the tokens it shares with the one before (the
    llama.cpp engine), so a sweep hands it the items it computes in the order of their prompts
    (:func:`amp.parser.batch.run_batch`).
    """

    engine: str = ""
    gradients: bool = False
    scores: bool = True
    unconstrained: bool = False
    batch_size: int = 8
    devices: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()
    precisions: tuple[str, ...] = ()
    own_precision: bool = False
    no_scores_reason: str = ""
    shares_prefixes: bool = False

    def runs_on(self, device: str | None) -> bool:
        """Whether it runs on ``device`` (``None``, ``""`` and ``auto`` leave the choice to it)."""
        if device in (None, "", "auto"):
            return True
        return device.split(":", 1)[0] in self.devices

    def offers(self, dtype: str | None) -> bool:
        """Whether it can be asked for ``dtype`` (``None``, ``""`` and ``auto``: its default precision)."""
        return dtype in (None, "", "auto") or dtype in self.precisions

    def runs_kind(self, kind: str | None) -> bool:
        """Whether it runs a model of ``kind`` (:data:`MODEL_KINDS`; ``None``: a spec that names nothing)."""
        return kind is not None and kind in self.formats


__all__ = ["MODEL_KINDS", "Capabilities"]
