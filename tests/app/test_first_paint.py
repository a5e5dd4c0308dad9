"""A just-started app draws its frame before it loads a heavy library (issue #41 point 6).

The frame (``app.py`` up to ``page.run()``: sign-in, navigation, sidebar) imports no torch,
transformers or llama.cpp: those load in the page that needs them or after it (the sidebar's Engine
choice, :func:`ui.frame.sidebar.fill`), so the page's heading is not kept waiting (1–3 s of torch on a
just-started app; ``bench/first_paint.py`` measures the time to the first heading).  Checked in a
fresh interpreter (nothing imported yet), on the default model (a GGUF: its engine rule is the one
that asks torch about CUDA), by noting which line of ``app.py`` was running when each of them was
first imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: The libraries a first paint must not wait for (the issue's list; plotly's core comes with streamlit).
LATE = ("torch", "transformers", "llama_cpp")

_PROBE = r"""
import json, sys
from streamlit.testing.v1 import AppTest

LATE, APP = json.loads(sys.argv[1]), sys.argv[2]
seen = {}

class Spy:
    def find_spec(self, name, path=None, target=None):
        if name in LATE and name not in seen:
            frame, line = sys._getframe(1), None
            while frame is not None:
                if frame.f_code.co_filename == APP:
                    line = frame.f_lineno
                frame = frame.f_back
            seen[name] = line
        return None

sys.meta_path.insert(0, Spy())
at = AppTest.from_file(APP, default_timeout=120)
at.run()
print(json.dumps({"seen": seen, "titles": [t.value for t in at.title], "errors": [e.value for e in at.exception]}))
"""


def _page_run_line(app: Path) -> int:
    lines = app.read_text(encoding="utf-8").splitlines()
    [number] = [i for i, text in enumerate(lines, 1) if text.strip().startswith("page.run()")]
    return number


def _first_imports(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "AMP_MODEL"}  # the default model: a GGUF
    env.update({"AMP_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(LATE), str(REPO / "app.py")], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_frame_imports_nothing_heavy_before_the_page(tmp_path: Path) -> None:
    got = _first_imports(tmp_path)
    assert got["errors"] == [] and got["titles"][:1] == ["Templates & examples"]  # the default page ran
    page_run = _page_run_line(REPO / "app.py")
    early = {name: line for name, line in got["seen"].items() if line is not None and line < page_run}
    assert early == {}, f"imported by app.py's frame before page.run() (line {page_run}): {early}"
