"""Page CSV downloads: a cell holding beams (a tuple or list) is written as a JSON list, as the
reproduction's CSVs are, so any reader gets the beams back with ``json.loads``."""

from __future__ import annotations

import csv
import io
import json

import pandas as pd

from ui.shared.common import csv_text


def test_beams_in_a_page_csv_are_json_lists() -> None:
    df = pd.DataFrame({"sentence": ["the boy saw", "a, b"],
                       "beams": [("exists x . boy(x)", "a 'quoted' beam"), ["one"]],
                       "p_lf0": [0.25, 0.5]})
    rows = list(csv.DictReader(io.StringIO(csv_text(df))))
    assert [json.loads(r["beams"]) for r in rows] == [["exists x . boy(x)", "a 'quoted' beam"], ["one"]]
    assert [r["sentence"] for r in rows] == ["the boy saw", "a, b"]
    assert [r["p_lf0"] for r in rows] == ["0.25", "0.5"]
    assert list(rows[0]) == ["sentence", "beams", "p_lf0"]  # no index column
