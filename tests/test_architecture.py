"""The folders are the architecture: layers of ``amp/`` depend one way (docs/architecture.md).

Every ``import`` in the library — at module level or inside a function — is read from the
source with :mod:`ast`, so a lazy import cannot hide an upward dependency.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The layers of amp/, lowest first: a module may import its own layer and the ones below.
#: ``data.lexicon`` (words and predicate names) sits under the logic that builds its grammar
#: from them; templates, generation and the v1 splits render LFs through the logic.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("amp.errors", "amp.version", "amp.settings", "amp.records"),
    ("amp.data.lexicon", "amp.code_digest", "amp.cache"),
    ("amp.logic",),
    ("amp.data",),
    ("amp.prompts",),
    ("amp.parser",),
    ("amp.evaluation",),
    ("amp.reporting",),
    ("amp.teaching",),
    ("amp.serve",),
    ("amp.cli", "amp.__main__"),
)


def rank(module: str) -> int:
    """The layer of a module: the longest declared prefix wins (``amp.data.lexicon`` before ``amp.data``)."""
    best, best_len = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = i, len(prefix)
    if best < 0:
        raise KeyError(f"{module} is in no layer: add it to LAYERS and docs/architecture.md")
    return best


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, imported module) for every import in a file, ``from amp import x`` as ``amp.x``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:  # ``from amp.data import lexicon`` imports amp.data.lexicon
                sub = f"{node.module}.{alias.name}"
                is_module = (ROOT / Path(*sub.split("."))).with_suffix(".py").is_file()
                yield node.lineno, sub if is_module else node.module


LIBRARY = sorted(p for p in (ROOT / "amp").rglob("*.py"))


def test_every_library_module_is_in_a_layer() -> None:
    for path in LIBRARY:
        name = module_name(path)
        if name != "amp":
            rank(name)


def upward_imports(paths: list[Path], root: Path = ROOT) -> list[str]:
    found = []
    for path in paths:
        name = module_name(path, root)
        if name == "amp":  # the package re-exports the public names of every layer
            continue
        mine = rank(name)
        for line, target in imports(path):
            if target.startswith("amp.") and rank(target) > mine:
                found.append(f"{path.relative_to(root)}:{line} imports {target} (layer {rank(target)} > {mine})")
    return found


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert upward_imports(LIBRARY) == []


def test_the_check_sees_a_lazy_upward_import(tmp_path: Path) -> None:
    """A planted module of the logic layer importing evaluation inside a function is reported."""
    planted = tmp_path / "amp" / "logic" / "planted.py"
    planted.parent.mkdir(parents=True)
    planted.write_text("def f():\n    from amp.evaluation import metrics\n    return metrics\n")
    assert upward_imports([planted], root=tmp_path) == [
        "amp/logic/planted.py:2 imports amp.evaluation.metrics (layer 6 > 2)"]


def test_no_streamlit_in_the_library_and_no_ui_import() -> None:
    bad = [f"{p.relative_to(ROOT)}:{line} imports {t}" for p in LIBRARY for line, t in imports(p)
           if t.split(".")[0] in {"streamlit", "ui", "views"}]
    assert bad == []


def test_ui_helpers_never_import_pages() -> None:
    bad = [f"{p.relative_to(ROOT)}:{line} imports {t}" for p in sorted((ROOT / "ui").rglob("*.py"))
           for line, t in imports(p) if t.split(".")[0] == "views"]
    assert bad == []


def test_the_architecture_page_draws_the_layers_in_this_order() -> None:
    """docs/architecture.md's Mermaid chain names the layers of LAYERS, lowest first."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    chain = next(line for line in text.splitlines() if line.strip().startswith("foundation -->"))
    drawn = [name.strip() for name in chain.split("-->")]
    packages = [prefixes[0].split(".")[1] for prefixes in LAYERS[2:]]
    assert drawn == ["foundation", "store", *packages]
    assert len(LAYERS) == len(drawn)
