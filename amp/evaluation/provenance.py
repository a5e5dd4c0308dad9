"""When a run ran and with which libraries: the provenance every report and run manifest records (issue #46).

:mod:`amp.evaluation.run_context` says *where* a run computed (model, engine, device, dtype,
server or API endpoint, code digest); this module says *when* and *with what*: the date it was
written (UTC, ISO 8601), its wall time, and the versions of Python and of the libraries a result
can depend on (torch, transformers, the llama.cpp binding ``llama-cpp-python``, numpy), read from
the installed distributions' metadata without importing them.  A library that is not installed
is recorded as ``none``.

Manifests written before these fields existed have none of them: :func:`provenance_of` answers
None for such settings, and everything else reads them as before.
"""

from __future__ import annotations

import datetime
import math
import platform
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from amp.evaluation.errors import ReportError
from amp.evaluation.run_context import code_identity
from amp.records import JsonRecord, StrObject

#: The libraries whose versions a run records: setting key → distribution name.
LIBRARIES: dict[str, str] = {"torch": "torch", "transformers": "transformers",
                             "llama_cpp_python": "llama-cpp-python", "numpy": "numpy"}
#: What a library that is not installed is recorded as.
NOT_INSTALLED = "none"
#: The settings keys :meth:`Provenance.as_settings` writes, in order (the report's "When and with what").
PROVENANCE_KEYS: tuple[str, ...] = ("date", "wall_time_s", "python", *LIBRARIES)
#: What :func:`stamped` adds to a manifest's settings that lack it: the provenance and the code's identity.
STAMPED_KEYS: tuple[str, ...] = (*PROVENANCE_KEYS, "code")


def library_versions() -> dict[str, str]:
    """``{"python": …, "torch": …, "transformers": …, "llama_cpp_python": …, "numpy": …}`` of this process."""
    out = {"python": platform.python_version()}
    for key, dist in LIBRARIES.items():
        try:
            out[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[key] = NOT_INSTALLED
    return out


def utc_now() -> str:
    """The current time in UTC as ISO 8601 to the second: ``2026-12-06T13:51:39Z``."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_wall_time(seconds: float | None) -> float | None:
    """A run's wall time in seconds (finite, not negative), rounded to 0.1 s; None when unknown."""
    if seconds is None:
        return None
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        raise ReportError(f"a run's wall time is a number of seconds, not {seconds!r}") from None
    if not math.isfinite(value) or value < 0:
        raise ReportError(f"a run's wall time must be finite and not negative, not {seconds!r}")
    return round(value, 1)


@dataclass(frozen=True)
class Provenance(JsonRecord):
    """When a run was written (``date``, UTC ISO 8601), how long it took (``wall_time_s``; None when
    unknown) and the versions of Python and the libraries (:func:`library_versions`)."""

    date: str
    wall_time_s: float | None = None
    versions: StrObject = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "wall_time_s", check_wall_time(self.wall_time_s))

    @classmethod
    def now(cls, wall_time_s: float | None = None) -> Provenance:
        """This process's provenance at this moment, for a run that took ``wall_time_s``."""
        return cls(date=utc_now(), wall_time_s=wall_time_s, versions=library_versions())

    def as_settings(self) -> dict[str, Any]:
        """As run-manifest settings (and report lines): :data:`PROVENANCE_KEYS`, ``wall_time_s`` only when known."""
        out: dict[str, Any] = {"date": self.date}
        if self.wall_time_s is not None:
            out["wall_time_s"] = self.wall_time_s
        out.update({key: self.versions[key] for key in PROVENANCE_KEYS if key in self.versions})
        return out


def provenance_of(settings: Mapping[str, Any]) -> Provenance | None:
    """The provenance recorded in a manifest's ``settings``; None for one written before it was recorded."""
    date = settings.get("date")
    if not isinstance(date, str) or not date:
        return None
    versions = {key: str(settings[key]) for key in PROVENANCE_KEYS[2:] if key in settings}
    try:
        return Provenance(date=date, wall_time_s=settings.get("wall_time_s"), versions=versions)
    except ReportError:
        return Provenance(date=date, versions=versions)  # a garbled wall time: the rest still reads


def stamped(settings: Mapping[str, Any], wall_time_s: float | None = None) -> dict[str, Any]:
    """``settings`` with this process's provenance — and the code's identity
    (:func:`amp.evaluation.run_context.code_identity`) — added where they do not say it already."""
    out = dict(settings)
    stamp = {**Provenance.now(wall_time_s).as_settings(), "code": code_identity()}
    for key, value in stamp.items():
        out.setdefault(key, value)
    return out


__all__ = ["LIBRARIES", "NOT_INSTALLED", "PROVENANCE_KEYS", "STAMPED_KEYS", "Provenance", "check_wall_time", "library_versions",
           "provenance_of", "stamped", "utc_now"]
