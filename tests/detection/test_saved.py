"""The last detection measurement on disk: written and read back whole, none, or a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from amp.detection.errors import DetectionError
from amp.detection.report import DetectionReport
from amp.detection.saved import LATEST_FILE, load_latest, save_latest


def _report(seed: int) -> DetectionReport:
    return DetectionReport(model="tiny", seed=seed, per_type=5, test_share=0.3, types=("pp",), held_out=("cat",),
                           n_train=7, n_test=3)


def test_the_last_measurement_is_read_back_whole_and_replaced_by_the_next(tmp_path: Path) -> None:
    assert load_latest(tmp_path) is None
    save_latest(_report(1), tmp_path)
    assert load_latest(tmp_path) == _report(1)
    save_latest(_report(2), tmp_path)
    assert load_latest(tmp_path) == _report(2)
    assert [p.name for p in tmp_path.iterdir()] == [LATEST_FILE]  # no temporary file left


@pytest.mark.parametrize("content", [b"", b"{not json", b'{"model": "tiny"}', b"\x80\x04K\x01."])
def test_a_damaged_file_is_a_clear_error_naming_it(tmp_path: Path, content: bytes) -> None:
    (tmp_path / LATEST_FILE).write_bytes(content)
    with pytest.raises(DetectionError, match=r"latest\.json.*not a detection report"):
        load_latest(tmp_path)
