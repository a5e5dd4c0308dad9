"""The engines that run a model in this process, in one registry: name → backend factory + capabilities.

An *engine* is what computes with the weights: ``transformers`` (PyTorch; any model, the exact
float32 path, GPUs, gradients; :class:`~amp.parser.backends.local.InProcessBackend`) and
``llama.cpp`` (a GGUF as shipped, on the CPU, in the GGUF's own precision; the constrained search
only, no gradients; :class:`~amp.parser.backends.llama.LlamaBackend`).  Each is one
:class:`EngineEntry`: its :class:`~amp.parser.core.capabilities.Capabilities` (declared once, next
to its backend), the factory that builds its backend from a :class:`ModelRequest`, and a few words
for people.  A further engine is one :func:`register_engine` call; the command line's ``--engine``
choices, the app's Engine choice and the parser service take it from here.

This module is also the one place where

* an engine name is checked (:func:`check_engine`: an :class:`~amp.parser.core.errors.UnknownEngine`
  naming the choices),
* ``$AMP_ENGINE`` is read (:func:`env_engine`),
* the engine is chosen when none is named (:func:`default_engine`, issue #29's rule,
  docs/paper-notes.md §19: llama.cpp for a GGUF on the CPU in its own precision, transformers
  for everything else), also for a command that needs a capability (:func:`select_engine`),
* a combination that cannot run is refused (a device or a precision the engine does not take,
  :func:`local_backend`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from amp.parser.backend import Backend
from amp.parser.backends import llama, local
from amp.parser.core.capabilities import Capabilities
from amp.parser.core.errors import ModelLoadError, UnknownEngine
from amp.parser.models.quantize import INT8
from amp.parser.models.spec import DEFAULT_SPEC, model_kind

#: Environment variable choosing the engine (default: :func:`default_engine`'s rule).
ENGINE_ENV = "AMP_ENGINE"
#: The built-in engines' names (declared by their backends).
TRANSFORMERS = local.ENGINE
LLAMA_CPP = llama.ENGINE
#: The engine of everything :func:`default_engine` does not give to llama.cpp.
DEFAULT_ENGINE = TRANSFORMERS
_AUTO = (None, "", "auto")


@dataclass(frozen=True)
class ModelRequest:
    """What an engine's factory builds a backend for: the model spec and how to run it."""

    spec: str = DEFAULT_SPEC
    device: str | None = None
    dtype: str | None = None
    trust_remote_code: bool = False
    gguf_file: str | None = None
    threads: int | None = None


def _installed() -> bool:
    return True


@dataclass(frozen=True)
class EngineEntry:
    """One engine: what it can do, how its backend is built, and its words for people.

    ``summary``: one short line (``--engine``'s help, the app's help under Engine); ``models``:
    the models it runs, in words ("GGUF models"), for the note when a model moves off it;
    ``installed``: whether its library is there (an engine that is not is not offered by the app
    nor chosen by the default rule)."""

    capabilities: Capabilities
    build: Callable[[ModelRequest], Backend]
    summary: str
    models: str = "any model"
    installed: Callable[[], bool] = _installed

    @property
    def name(self) -> str:
        return self.capabilities.engine


_REGISTRY: dict[str, EngineEntry] = {}
_BUILT_IN: set[str] = set()


def register_engine(entry: EngineEntry) -> None:
    """Add ``entry`` under its capabilities' engine name (lower case, not taken yet)."""
    name = entry.name
    if not name or name != name.strip().lower():
        raise ValueError(f"an engine name is lower case without spaces around it, not {name!r}")
    if name in _REGISTRY:
        raise ValueError(f"the engine {name!r} is registered already")
    _REGISTRY[name] = entry


def unregister_engine(name: str) -> None:
    """Remove an engine added with :func:`register_engine` (the built-in ones stay)."""
    if name in _BUILT_IN:
        raise ValueError(f"the built-in engine {name!r} cannot be removed")
    _REGISTRY.pop(name, None)


def engine_names() -> tuple[str, ...]:
    """Every registered engine, the built-in ones first."""
    return tuple(_REGISTRY)


def check_engine(name: str | None) -> str | None:
    """``name`` as a registered engine (``None`` for none given), or :class:`UnknownEngine` naming the choices."""
    chosen = (name or "").strip().lower()
    if not chosen:
        return None
    if chosen not in _REGISTRY:
        raise UnknownEngine(chosen, engine_names())
    return chosen


def engine_entry(name: str) -> EngineEntry:
    """The registry entry of engine ``name`` (:class:`UnknownEngine` for an unknown or empty name)."""
    checked = check_engine(name)
    if checked is None:
        raise UnknownEngine(name, engine_names())
    return _REGISTRY[checked]


def capabilities(name: str) -> Capabilities:
    """What engine ``name`` can do."""
    return engine_entry(name).capabilities


def engines_with(need: Callable[[Capabilities], bool]) -> tuple[str, ...]:
    """The installed engines whose capabilities have what ``need`` asks (``lambda c: c.gradients``)."""
    return tuple(name for name, entry in _REGISTRY.items() if entry.installed() and need(entry.capabilities))


def env_engine() -> str | None:
    """The engine ``$AMP_ENGINE`` names (checked), or ``None`` when it is unset."""
    return check_engine(os.environ.get(ENGINE_ENV))


def runs_model(name: str, spec: str = DEFAULT_SPEC, gguf_file: str | None = None) -> bool:
    """Whether engine ``name`` runs the model ``spec`` names (a spec that names nothing: left to loading)."""
    kind = model_kind(spec, gguf_file)
    return kind is None or capabilities(name).runs_kind(kind)


def engines_for(spec: str = DEFAULT_SPEC, gguf_file: str | None = None) -> tuple[str, ...]:
    """The installed engines that run the model ``spec`` names, in registry order."""
    return tuple(name for name, entry in _REGISTRY.items() if entry.installed() and runs_model(name, spec, gguf_file))


def default_engine(spec: str = DEFAULT_SPEC, *, device: str | None = None, dtype: str | None = None,
                   gguf_file: str | None = None) -> str:
    """The engine when none is chosen (issue #29's rule, docs/paper-notes.md §19): **llama.cpp for a
    GGUF model on the CPU** in the GGUF's own precision — the embedded model or a ``.gguf`` file
    (the model kinds it runs), no ``dtype`` asked (it offers none), the device ``cpu`` (or automatic
    on a machine without CUDA), llama-cpp-python installed; :data:`DEFAULT_ENGINE` (transformers)
    for everything else: other models, GPUs and an asked precision (``float32``, the exact path).

    llama.cpp earned the default on the agreement bench (``bench/engine_bench.py``, 50 sweep items):
    the same LF0/LF1/neither match on 48/50, mean |ΔP(LF0)| 0.010, no reading flip.  Nothing loads
    here; a spec that names nothing usable is left to the backend to refuse."""
    fast = _REGISTRY[LLAMA_CPP]
    caps = fast.capabilities
    if not (caps.offers(dtype) and caps.runs_on(device)) or not fast.installed():
        return DEFAULT_ENGINE
    if not caps.runs_kind(model_kind(spec, gguf_file)):
        return DEFAULT_ENGINE
    if device in _AUTO:
        import torch  # late: start-up cost (torch, only on a machine that could run llama.cpp)

        if torch.cuda.is_available():
            return DEFAULT_ENGINE
    return LLAMA_CPP


def select_engine(engine: str | None = None, *, spec: str = DEFAULT_SPEC, device: str | None = None,
                  dtype: str | None = None, gguf_file: str | None = None,
                  need: Callable[[Capabilities], bool] | None = None) -> str:
    """The engine to run: ``engine`` if given, else ``$AMP_ENGINE``, else :func:`default_engine` for
    the model ``spec`` on ``device`` in ``dtype`` — or, when the rule's engine lacks what the caller
    ``need`` s (gradients, the search without the grammar), the first engine that has it and takes
    this model, device and precision.  A named engine is used as named (it says later what it cannot do)."""
    chosen = check_engine(engine) or env_engine()
    if chosen:
        return chosen
    rule = default_engine(spec, device=device, dtype=dtype, gguf_file=gguf_file)
    if need is None or need(_REGISTRY[rule].capabilities):
        return rule
    for name, entry in _REGISTRY.items():
        caps = entry.capabilities
        if (need(caps) and caps.runs_on(device) and caps.offers(dtype) and entry.installed()
                and runs_model(name, spec, gguf_file)):
            return name
    return rule


def _devices(devices: tuple[str, ...]) -> str:
    names = [d.upper() for d in devices]
    return "the " + (names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1])


def _instead(name: str, fits: Callable[[Capabilities], bool]) -> str:
    """`` or use --engine X`` for the first other engine that ``fits``, else ``""``."""
    other = next((n for n, e in _REGISTRY.items() if n != name and e.installed() and fits(e.capabilities)), None)
    return f" or use --engine {other}" if other else ""


def check_combination(name: str, *, device: str | None = None, dtype: str | None = None) -> None:
    """:class:`ModelLoadError` when engine ``name`` cannot run on ``device`` or in ``dtype``."""
    caps = capabilities(name)
    if not caps.runs_on(device):
        raise ModelLoadError(f"the {name} engine runs on {_devices(caps.devices)} here, not {device}; "
                             f"drop --device {device}{_instead(name, lambda c: c.runs_on(device))}")
    if not caps.offers(dtype):
        what = "int8 quantisation" if dtype == INT8 else f"dtype {dtype}"
        if not caps.precisions:
            raise ModelLoadError(f"the {name} engine computes in the model file's own precision, not {what}; "
                                 f"drop --dtype{_instead(name, lambda c: c.offers(dtype))}")
        raise ModelLoadError(f"unknown dtype {dtype!r} for the {name} engine; use one of "
                             f"{', '.join(caps.precisions)}{_instead(name, lambda c: c.offers(dtype))}")


def local_backend(spec: str = DEFAULT_SPEC, *, engine: str | None = None, device: str | None = None,
                  dtype: str | None = None, trust_remote_code: bool = False, gguf_file: str | None = None,
                  threads: int | None = None, need: Callable[[Capabilities], bool] | None = None) -> Backend:
    """The backend of this process for ``spec`` on the engine :func:`select_engine` gives
    (:class:`ModelLoadError` for a combination that cannot run, :func:`check_combination`)."""
    chosen = select_engine(engine, spec=spec, device=device, dtype=dtype, gguf_file=gguf_file, need=need)
    check_combination(chosen, device=device, dtype=dtype)
    return _REGISTRY[chosen].build(ModelRequest(spec=spec, device=device, dtype=dtype,
                                                trust_remote_code=trust_remote_code, gguf_file=gguf_file,
                                                threads=threads))


# -- the built-in engines --------------------------------------------------------------------------------


def _transformers(request: ModelRequest) -> Backend:
    return local.InProcessBackend(request.spec, device=request.device, dtype=request.dtype,
                                  trust_remote_code=request.trust_remote_code, gguf_file=request.gguf_file)


def _llama_cpp(request: ModelRequest) -> Backend:
    return llama.LlamaBackend(request.spec, gguf_file=request.gguf_file, threads=request.threads)


def _llama_installed() -> bool:
    return llama.llama_cpp_installed()


for _entry in (EngineEntry(local.CAPABILITIES, _transformers, "any model, exact float32, GPUs, gradients"),
               EngineEntry(llama.CAPABILITIES, _llama_cpp, "a GGUF as shipped, on the CPU", models="GGUF models",
                           installed=_llama_installed)):
    register_engine(_entry)
    _BUILT_IN.add(_entry.name)


__all__ = [
    "DEFAULT_ENGINE",
    "ENGINE_ENV",
    "LLAMA_CPP",
    "TRANSFORMERS",
    "EngineEntry",
    "ModelRequest",
    "capabilities",
    "check_combination",
    "check_engine",
    "default_engine",
    "engine_entry",
    "engine_names",
    "engines_for",
    "engines_with",
    "env_engine",
    "local_backend",
    "register_engine",
    "runs_model",
    "select_engine",
    "unregister_engine",
]
