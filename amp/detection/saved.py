"""The last ambiguity-detection measurement, kept on disk (docs/paper-notes.md §22).

The Research section measures; the lesson's last slide shows that measurement.  Kept as the
report's own JSON (never pickled) in ``<cache root>/detection/latest.json``, written atomically,
so the slide is still there after a reload, a new tab or a restart of the app.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from pydantic import ValidationError

from amp.detection.errors import DetectionError
from amp.detection.report import DetectionReport
from amp.settings import cache_root

#: The file of the last measurement, inside :func:`detection_dir`.
LATEST_FILE = "latest.json"


def detection_dir() -> Path:
    """``<cache root>/detection`` (``$AMP_CACHE_DIR/detection`` when set); not created here."""
    return cache_root() / "detection"


def save_latest(report: DetectionReport, directory: Path | None = None) -> Path:
    """Write ``report`` as the last measurement (a temporary file, then a rename: a reader never
    sees half of one); :class:`OSError` when the folder cannot be written."""
    folder = Path(directory) if directory is not None else detection_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LATEST_FILE
    partial = path.with_name(f".{LATEST_FILE}.{os.getpid()}.{threading.get_ident()}.tmp")
    partial.write_bytes(report.to_json())
    os.replace(partial, path)
    return path


def load_latest(directory: Path | None = None) -> DetectionReport | None:
    """The last measurement, or ``None`` when there is none; :class:`DetectionError` naming the file
    when it cannot be read or is not a detection report."""
    path = (Path(directory) if directory is not None else detection_dir()) / LATEST_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DetectionError(f"cannot read the saved measurement {str(path)!r}: {exc.strerror or exc}") from exc
    try:
        return DetectionReport.from_json(data)
    except ValidationError:
        raise DetectionError(f"the saved measurement {str(path)!r} is not a detection report "
                             "(measure again on the Research page)") from None
