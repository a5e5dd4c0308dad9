"""The teacher's library of own sentences: one small JSON file on disk (issue #11 point 1).

The file is ``<cache root>/own_sentences.json`` (beside the class polls, :mod:`amp.settings`), or
the file named by ``$AMP_OWN_SENTENCES`` (:data:`OWN_SENTENCES_ENV_VAR`); paths are computed on
every call, so a test can point it at a temporary file.  Its JSON::

    {"format": "amp-own-sentences", "version": 1, "sentences": [<OwnSentence.to_dict()>, ...]}

Writes are atomic (a temporary file in the same folder, then ``os.replace``), so a crash leaves
the old library or the new one, never half of one.  A file that does not read is an error that
says so (:class:`OwnLibraryError`) and is never silently emptied or overwritten.  Bounded: at most
:data:`MAX_SENTENCES` sentences and :data:`MAX_LIBRARY_BYTES` bytes.

:meth:`OwnLibrary.export_json` and :meth:`OwnLibrary.import_json` are the public exchange format
(the download/upload of the Own sentences page; demo packs carry the same bytes).  An import is
validated whole before anything is written: bad data raises an error saying where, and the
library is unchanged.  :func:`find_own` is the lookup lessons use.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amp.settings import cache_root
from amp.teaching.errors import OwnLibraryError, OwnSentenceError
from amp.teaching.own_sentences import OwnSentence, normalise_text

#: The environment variable that moves the library file.
OWN_SENTENCES_ENV_VAR = "AMP_OWN_SENTENCES"
#: The file name under the cache root.
LIBRARY_FILE = "own_sentences.json"
#: The ``format`` tag and version of the file and of an export.
LIBRARY_FORMAT = "amp-own-sentences"
LIBRARY_VERSION = 1
#: Bounds of a library (and of an import).
MAX_SENTENCES = 200
MAX_LIBRARY_BYTES = 4_000_000

#: Serialises read-modify-write of library files in this process (the app's sessions are threads
#: of one process, so two tabs saving at once do not lose one of the saves).
_WRITE_LOCK = threading.RLock()


def default_library_path() -> Path:
    """``$AMP_OWN_SENTENCES`` if set (and non-empty), else ``<cache root>/own_sentences.json``."""
    value = os.environ.get(OWN_SENTENCES_ENV_VAR, "").strip()
    return Path(value).expanduser() if value else cache_root() / LIBRARY_FILE


@dataclass(frozen=True)
class ImportReport:
    """What an import did: the sentences it added, those it replaced (same surface), and those it
    left as the library had them (:meth:`OwnLibrary.add_missing`: a demo pack never overwrites a
    teacher's sentence)."""

    added: tuple[str, ...]
    replaced: tuple[str, ...]
    kept: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.kept:
            return f"{len(self.added)} added, {len(self.kept)} already in the library (kept)"
        return f"{len(self.added)} added, {len(self.replaced)} replaced"


def _key(surface: str) -> str:
    """Sentences are identified by their surface with whitespace normalised."""
    try:
        return normalise_text(surface, "sentence", 10_000)
    except OwnSentenceError:
        return ""


def parse_library(data: bytes | str, source: str) -> tuple[OwnSentence, ...]:
    """The sentences of a library/export JSON; :class:`OwnLibraryError` naming ``source`` and the
    place (``sentence 3 ('I saw her duck'), lf1: …``) for anything wrong."""
    if len(data) > MAX_LIBRARY_BYTES:
        raise OwnLibraryError(f"{source} is {len(data):,} bytes; an own-sentence library holds at most "
                              f"{MAX_LIBRARY_BYTES:,}")
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise OwnLibraryError(f"{source} is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != LIBRARY_FORMAT:
        raise OwnLibraryError(f"{source} is not an own-sentence library (no \"format\": \"{LIBRARY_FORMAT}\")")
    if doc.get("version") != LIBRARY_VERSION:
        raise OwnLibraryError(f"{source} has version {doc.get('version')!r}; this code reads {LIBRARY_VERSION}")
    items = doc.get("sentences")
    if not isinstance(items, list):
        raise OwnLibraryError(f"{source}: \"sentences\" must be a list")
    if len(items) > MAX_SENTENCES:
        raise OwnLibraryError(f"{source} holds {len(items)} sentences; at most {MAX_SENTENCES} are allowed")
    out: dict[str, OwnSentence] = {}
    for n, item in enumerate(items, 1):
        where = f"{source}, sentence {n}"
        if isinstance(item, dict) and isinstance(item.get("surface"), str):
            where += f" ({item['surface'][:60]!r})"
        try:
            sentence = OwnSentence.from_dict(item)
        except OwnSentenceError as exc:
            raise OwnLibraryError(f"{where}, {exc.field}: {exc}") from None
        out[_key(sentence.surface)] = sentence  # a repeated surface: the last one wins
    return tuple(out.values())


def library_json(sentences: tuple[OwnSentence, ...] | list[OwnSentence]) -> bytes:
    """The library/export JSON of ``sentences`` (UTF-8, indented: people read and diff it)."""
    doc: dict[str, Any] = {"format": LIBRARY_FORMAT, "version": LIBRARY_VERSION,
                           "sentences": [s.to_dict() for s in sentences]}
    return json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8")


class OwnLibrary:
    """The own-sentence library in one JSON file (``path`` defaults to :func:`default_library_path`).

    Every call reads the file afresh (it is small, and another tab may have changed it)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_library_path()

    def __repr__(self) -> str:
        return f"OwnLibrary({str(self.path)!r})"

    def list(self) -> tuple[OwnSentence, ...]:
        """The sentences in the order they were added (none if the file does not exist yet)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return ()
        except OSError as exc:
            raise OwnLibraryError(f"cannot read the own-sentence library {self.path}: {exc}") from None
        try:
            return parse_library(data, str(self.path))
        except OwnLibraryError as exc:
            raise OwnLibraryError(f"the own-sentence library is broken and was left as it is — fix or move "
                                  f"the file away: {exc}") from None

    def get(self, surface: str) -> OwnSentence | None:
        """The sentence with this surface (whitespace normalised), or ``None``."""
        key = _key(surface)
        return next((s for s in self.list() if _key(s.surface) == key), None) if key else None

    def add(self, sentence: OwnSentence) -> bool:
        """Add ``sentence``, replacing one with the same surface; ``True`` if it replaced one."""
        if not isinstance(sentence, OwnSentence):
            raise OwnLibraryError(f"can only add an OwnSentence, not {type(sentence).__name__}")
        with _WRITE_LOCK:
            merged, report = self._merged(self.list(), (sentence,))
            self._write(merged)
        return bool(report.replaced)

    def remove(self, surface: str) -> bool:
        """Remove the sentence with this surface; ``False`` if there was none."""
        with _WRITE_LOCK:
            current = self.list()
            kept = tuple(s for s in current if _key(s.surface) != _key(surface))
            if len(kept) == len(current):
                return False
            self._write(kept)
        return True

    def export_json(self) -> bytes:
        """The whole library as export JSON (what :meth:`import_json` reads)."""
        return library_json(self.list())

    def import_json(self, data: bytes | str, source: str = "the import") -> ImportReport:
        """Merge an export into the library (same surface: replaced); all or nothing."""
        incoming = parse_library(data, source)
        with _WRITE_LOCK:
            merged, report = self._merged(self.list(), incoming)
            self._write(merged)
        return report

    def add_missing(self, sentences: Iterable[OwnSentence], *,
                    dry_run: bool = False) -> ImportReport:
        """Add the sentences whose surface the library does not hold yet; those it holds are kept as
        they are (a demo pack's import).  All or nothing; ``dry_run`` checks the bounds and reports
        without writing."""
        with _WRITE_LOCK:
            merged, report = self._merged(self.list(), tuple(sentences), keep_local=True)
            if report.added and not dry_run:
                self._write(merged)
        return report

    @staticmethod
    def _merged(current: tuple[OwnSentence, ...], incoming: tuple[OwnSentence, ...], *,
                keep_local: bool = False) -> tuple[tuple[OwnSentence, ...], ImportReport]:
        by_key = {_key(s.surface): s for s in current}
        added: list[str] = []
        replaced: list[str] = []
        kept: list[str] = []
        for s in incoming:
            if _key(s.surface) not in by_key:
                added.append(s.surface)
            elif keep_local:
                kept.append(s.surface)
                continue
            else:
                replaced.append(s.surface)
            by_key[_key(s.surface)] = s
        if len(by_key) > MAX_SENTENCES:
            raise OwnLibraryError(f"the library would hold {len(by_key)} sentences; at most {MAX_SENTENCES} "
                                  "are allowed (delete some first)")
        return tuple(by_key.values()), ImportReport(tuple(added), tuple(replaced), tuple(kept))

    def _write(self, sentences: tuple[OwnSentence, ...]) -> None:
        """Atomically replace the file (temporary file in the same folder, then ``os.replace``)."""
        data = library_json(sentences)
        if len(data) > MAX_LIBRARY_BYTES:
            raise OwnLibraryError(f"the library would be {len(data):,} bytes; at most {MAX_LIBRARY_BYTES:,} "
                                  "are allowed")
        tmp = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".own_sentences.", suffix=".tmp", dir=self.path.parent)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
            tmp = None
        except OSError as exc:
            raise OwnLibraryError(f"cannot write the own-sentence library {self.path}: {exc}") from None
        finally:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)


def find_own(surface: str) -> OwnSentence | None:
    """The own sentence with this surface in the default library, or ``None``.

    Raises :class:`OwnLibraryError` when the library file is broken (a caller shows it)."""
    return OwnLibrary().get(surface)
