"""The bench scripts follow the library's rule for late imports (``tests/test_architecture.py``).

An import inside a function of ``bench/*.py`` carries ``# late: optional dependency (…)`` or
``# late: start-up cost (…)`` on its line or the line above, and the claim holds: the import loads a
slow or optional package (:data:`test_architecture.HEAVY`, or one of :data:`BENCH_OPTIONAL` that only
a bench script uses) that the script has not loaded already — through the amp modules it imports,
and through the sibling scripts it imports by their own names (the scripts put ``bench/`` on
``sys.path``).  An import that must stay late for the offline GPU machine (``docs/gpu.md``) says
``# late: optional dependency (…)``: ``bench/gpu_check.py`` imports its sibling modules first and
then reports a missing torch or transformers in one ``error:`` line, so none of them imports
either at load time.
"""

from __future__ import annotations

from pathlib import Path

from test_architecture import HEAVY, _load_time_imports, heavy_at_load, unexplained_late_imports

ROOT = Path(__file__).resolve().parents[2]

#: Packages only a bench script uses and the project does not depend on (so they may be missing).
BENCH_OPTIONAL = {"msgspec": "bench/records_bench.py compares the records with it where it is installed"}


def bench_scripts(root: Path = ROOT) -> list[Path]:
    return sorted((root / "bench").glob("*.py"))


def heavy_loaded(targets: list[str] | tuple[str, ...], root: Path = ROOT,
                 seen: frozenset[str] = frozenset()) -> set[str]:
    """The slow or optional packages importing ``targets`` loads (:data:`test_architecture.HEAVY` and
    :data:`BENCH_OPTIONAL`): amp modules as the library's rule follows them, a sibling script
    (``gpu_check_random``) through its own load-time imports."""
    siblings = {t.split(".")[0] for t in targets if (root / "bench" / f"{t.split('.')[0]}.py").is_file()}
    heavy = heavy_at_load([t for t in targets if t.split(".")[0] not in siblings], root)
    heavy |= {t.split(".")[0] for t in targets} & BENCH_OPTIONAL.keys()
    for sibling in sorted(siblings - seen):
        heavy |= heavy_loaded(_load_time_imports(root / "bench" / f"{sibling}.py"), root, seen | siblings)
    return heavy


def unexplained_bench_imports(paths: list[Path], root: Path = ROOT) -> list[str]:
    """Late imports of bench scripts without a ``# late: …`` reason, or with one that does not hold
    (the library's check, :func:`test_architecture.unexplained_late_imports`, with sibling scripts followed)."""
    return unexplained_late_imports(paths, root, heavy=heavy_loaded)


def test_bench_late_imports_say_why() -> None:
    assert len(bench_scripts()) >= 10
    assert unexplained_bench_imports(bench_scripts()) == []


def test_the_check_sees_unexplained_bench_imports(tmp_path: Path) -> None:
    """Planted scripts: a late light import, a made-up reason, a reason a sibling already spent; and
    reasons that hold (a heavy package, a bench-only optional one, a sibling that loads one)."""
    bench = tmp_path / "bench"
    bench.mkdir()
    assert "torch" in HEAVY and "pandas" in HEAVY
    (bench / "loads_torch.py").write_text("import torch\n")
    (bench / "planted.py").write_text(
        "import loads_torch\n\n\n"
        "def f():\n    import json\n    return json\n\n\n"
        "def g():\n    import textwrap  # late: start-up cost (textwrap)\n    return textwrap\n\n\n"
        "def h():\n    import torch  # late: start-up cost (torch)\n    return torch, loads_torch\n\n\n"
        "def i():\n    # late: optional dependency (pandas)\n    import pandas\n    return pandas\n\n\n"
        "def j():\n    import msgspec  # late: optional dependency (msgspec)\n    return msgspec\n")
    (bench / "other.py").write_text(
        "def f():\n    from loads_torch import torch  # late: start-up cost (torch, through loads_torch)\n"
        "    return torch\n")
    assert unexplained_bench_imports(bench_scripts(tmp_path), root=tmp_path) == [
        "bench/planted.py:5: a late import without '# late: optional dependency (…)' or "
        "'# late: start-up cost (…)'",
        "bench/planted.py:10: says '# late: start-up cost (textwrap)' but loads nothing slow or optional "
        "that the module has not loaded already: import it at the top",
        "bench/planted.py:15: says '# late: start-up cost (torch)' but loads nothing slow or optional "
        "that the module has not loaded already: import it at the top",
    ]
