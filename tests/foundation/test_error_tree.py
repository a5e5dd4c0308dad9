"""Every error is in one tree: an exception class of the project derives from ``amp.errors.AmpError``
and is declared in an ``errors.py`` module (its package's, or ``amp/errors.py`` for the shared ones).

The classes are read from the source with :mod:`ast` — every class at any depth of ``amp/``,
``bench/``, ``ui/``, ``views/`` and ``app.py`` — and their bases followed through the module's
imports (re-exports included) to a builtin, a project class or an outside class (imported to ask
whether it is an exception).  Two kinds pass:

* an **error** (a ``BaseException`` that is no ``Warning``): must derive from ``AmpError`` and sit
  in an ``errors.py``, so the app's, the CLI's and the service's ``except AmpError`` see it;
* a **warning category** (a ``Warning``): must sit in an ``errors.py`` too, but is no ``AmpError``:
  it is issued with ``warnings.warn``, never raised for a handler (``amp.errors.CacheWarning``).

:data:`NOT_ERRORS` names the classes that are exceptions without being errors, each with why.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AMP_ERROR = "amp.errors.AmpError"

#: Exception classes that are no error, with the reason each may stay outside the tree.
NOT_ERRORS: dict[tuple[str, str], str] = {
    ("ui/shared/halt.py", "PageHalt"): "a control-flow signal (a page that ends early, suppressed by app.py): "
    "as an AmpError the pages' `except AmpError` boxes would swallow it",
    ("amp/parser/backends/api_pace.py", "StopWaiting"): "a control-flow signal inside the API client (a wait for "
    "a place in flight ended by its stop(), caught in amp/parser/backends/api.py): it never reaches a user",
}


@dataclass(frozen=True)
class Declared:
    """A class as the source declares it: where, its name and its bases (resolved names)."""

    path: str
    line: int
    name: str
    bases: tuple[str, ...]


def project_files(root: Path) -> list[Path]:
    files = [p for top in ("amp", "bench", "ui", "views") for p in sorted((root / top).rglob("*.py"))]
    return files + ([root / "app.py"] if (root / "app.py").is_file() else [])


def module_of(path: Path, root: Path) -> str:
    """The name a file is imported under: dotted from the root; a bench script by its own name
    (the scripts put ``bench/`` on ``sys.path`` and import each other so)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[0] == "bench":
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


class Tree:
    """The classes and imports of the project's modules, and what each class derives from."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.classes: dict[str, dict[str, Declared]] = {}  # module → class name → declaration
        self.imports: dict[str, dict[str, str]] = {}  # module → local name → what it names
        self._kinds: dict[str, str] = {}
        for path in project_files(root):
            module = module_of(path, root)
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names: dict[str, str] = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.asname:
                            names[alias.asname] = alias.name
                        else:
                            head = alias.name.split(".")[0]
                            names[head] = head
                elif isinstance(node, ast.ImportFrom) and node.module:
                    base = node.module
                    if node.level:  # relative: from the module's package
                        package = module.split(".")[: len(module.split(".")) - node.level]
                        base = ".".join([*package, node.module])
                    for alias in node.names:
                        names[alias.asname or alias.name] = f"{base}.{alias.name}"
            self.imports[module] = names
            self.classes[module] = {
                node.name: Declared(str(path.relative_to(root)), node.lineno, node.name,
                                    tuple(self._dotted(b) for b in node.bases))
                for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}

    @staticmethod
    def _dotted(node: ast.expr) -> str:
        if isinstance(node, ast.Subscript):  # Generic[T], Protocol[T]
            node = node.value
        return ast.unparse(node)

    def resolve(self, module: str, dotted: str, depth: int = 0, *, skip: str = "") -> str:
        """What ``dotted`` (a name as written in ``module``) names: ``module.Class`` for a project
        class, ``builtins.X``, or an outside ``package.module.Name``.  ``skip``: a class's own name
        while its bases are read (``class Cache(Cache)`` derives from the imported one)."""
        head, _, rest = dotted.partition(".")
        if not rest and head != skip and head in self.classes.get(module, {}):
            return f"{module}.{head}"
        if head in self.imports.get(module, {}):
            return self.follow(self.imports[module][head] + (f".{rest}" if rest else ""), depth)
        if not rest and hasattr(builtins, head):
            return f"builtins.{head}"
        return dotted

    def follow(self, target: str, depth: int = 0) -> str:
        """A full dotted name, through the project's re-exports, to where it is declared."""
        parts = target.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module in self.classes and depth < 20:
                return self.resolve(module, ".".join(parts[cut:]), depth + 1)
        return target

    def declared(self, qualified: str) -> Declared | None:
        module, _, name = qualified.rpartition(".")
        return self.classes.get(module, {}).get(name)

    def kind(self, qualified: str) -> str:
        """``"error"`` (an AmpError), ``"stray"`` (an exception outside the tree), ``"warning"``, or ``""``."""
        if qualified not in self._kinds:
            found = self.declared(qualified)
            if qualified == AMP_ERROR:
                self._kinds[qualified] = "error"
            elif found is None:
                self._kinds[qualified] = outside_kind(qualified)
            else:
                module = qualified.rpartition(".")[0]
                kinds = {self.kind(self.resolve(module, base, skip=found.name)) for base in found.bases}
                self._kinds[qualified] = next((k for k in ("error", "warning", "stray") if k in kinds), "")
        return self._kinds[qualified]

    def exceptions(self) -> list[tuple[Declared, str]]:
        return [(found, kind) for module, classes in sorted(self.classes.items()) for found in classes.values()
                if (kind := self.kind(f"{module}.{found.name}"))]


@functools.cache
def outside_kind(qualified: str) -> str:
    """The kind of a builtin or outside class (imported to ask); ``""`` when it is no exception or
    cannot be imported here (an optional extra)."""
    module, _, name = qualified.rpartition(".")
    try:
        found = getattr(importlib.import_module(module), name) if module else None
    except (ImportError, AttributeError):
        return ""
    if not isinstance(found, type) or not issubclass(found, BaseException):
        return ""
    return "warning" if issubclass(found, Warning) else "stray"


def misplaced_exceptions(root: Path = ROOT, allowed: dict[tuple[str, str], str] | None = None) -> list[str]:
    """Exception classes outside the tree: an error that is no AmpError, or any exception class
    declared outside an ``errors.py``; ``allowed`` (path, class) pairs excepted."""
    allowed = NOT_ERRORS if allowed is None else allowed
    found = []
    for declared, kind in Tree(root).exceptions():
        if (declared.path, declared.name) in allowed:
            continue
        where = f"{declared.path}:{declared.line} {declared.name}"
        if kind == "stray":
            found.append(f"{where}: an exception that does not derive from AmpError")
        if Path(declared.path).name != "errors.py":
            found.append(f"{where}: declared outside an errors.py module")
    return found


def test_every_exception_class_is_in_the_error_tree() -> None:
    assert misplaced_exceptions() == []


def test_the_walk_sees_the_library_errors() -> None:
    """The walk is not vacuous: it finds the tree's errors across the packages, and the warning."""
    kinds = {(d.path, d.name): kind for d, kind in Tree(ROOT).exceptions()}
    assert sum(kind == "error" for kind in kinds.values()) >= 50
    assert kinds[("amp/errors.py", "AmpError")] == "error"
    assert kinds[("amp/errors.py", "UnsafeEntryError")] == "error"
    assert kinds[("amp/parser/core/errors.py", "ModelRefused")] == "error"  # through BackendError
    assert kinds[("amp/cli/errors.py", "PredictionsError")] == "error"
    assert kinds[("bench/errors.py", "CarryError")] == "error"
    assert kinds[("amp/errors.py", "CacheWarning")] == "warning"


def test_every_exemption_names_an_exception_that_exists() -> None:
    kinds = {(d.path, d.name): kind for d, kind in Tree(ROOT).exceptions()}
    assert {where: kinds.get(where) for where in NOT_ERRORS} == {where: "stray" for where in NOT_ERRORS}


def test_the_check_sees_planted_strays(tmp_path: Path) -> None:
    """Planted: a ValueError in a library module, a plain Exception in a package's errors.py, an
    outside exception's subclass, an AmpError outside errors.py; a subclass of an AmpError reached
    through a re-export and an aliased module passes, and so do a warning category and a model."""
    (tmp_path / "amp" / "logic").mkdir(parents=True)
    (tmp_path / "bench").mkdir()
    (tmp_path / "amp" / "__init__.py").write_text("")
    (tmp_path / "amp" / "errors.py").write_text(
        "class AmpError(Exception):\n    pass\n\n\nclass Noted(UserWarning):\n    pass\n")
    (tmp_path / "amp" / "logic" / "__init__.py").write_text("from amp.logic.errors import LogicError\n")
    (tmp_path / "amp" / "logic" / "errors.py").write_text(
        "import json\n\nimport amp.errors as base\n\n\nclass LogicError(base.AmpError, ValueError):\n    pass\n\n\n"
        "class Plain(Exception):\n    pass\n\n\nclass Decoded(json.JSONDecodeError):\n    pass\n")
    (tmp_path / "amp" / "logic" / "reader.py").write_text(
        "from dataclasses import dataclass\n\nfrom amp.logic import LogicError\n\n\n"
        "class ReadError(ValueError):\n    pass\n\n\nclass Deeper(LogicError):\n    pass\n\n\n"
        "@dataclass\nclass Record:\n    x: int\n")
    (tmp_path / "bench" / "errors.py").write_text(
        "from amp.logic import LogicError\n\n\nclass BenchError(LogicError):\n    pass\n")
    assert misplaced_exceptions(tmp_path, allowed={}) == [
        "amp/logic/errors.py:10 Plain: an exception that does not derive from AmpError",
        "amp/logic/errors.py:14 Decoded: an exception that does not derive from AmpError",
        "amp/logic/reader.py:6 ReadError: an exception that does not derive from AmpError",
        "amp/logic/reader.py:6 ReadError: declared outside an errors.py module",
        "amp/logic/reader.py:10 Deeper: declared outside an errors.py module",
    ]
    assert misplaced_exceptions(tmp_path, allowed={("amp/logic/reader.py", "ReadError"): "planted"}) == [
        "amp/logic/errors.py:10 Plain: an exception that does not derive from AmpError",
        "amp/logic/errors.py:14 Decoded: an exception that does not derive from AmpError",
        "amp/logic/reader.py:10 Deeper: declared outside an errors.py module",
    ]
