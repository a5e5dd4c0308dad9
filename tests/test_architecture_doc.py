"""docs/architecture.md is true by test: every module is in its table, every module and path it names
exists, and the size rule it states holds (a long module or function gives its reason next to it).

The table "What each folder holds" has one row per folder of the code (``amp/`` and its packages,
the app's ``ui/`` rooms, ``views/``, the entry point ``app.py``): its first cell names the folder,
its second the modules in it (each as ``name``).  A new module that is in no row, or a row naming a
module that is gone, fails here — so a newcomer who looks a module up in the table finds it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
#: The code folders the table covers (with every sub-folder that holds Python modules).
CODE_ROOTS = ("amp", "ui", "views")
#: The size rule of docs/architecture.md: longer needs a reason (``# long: …``) next to it.
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 60
LONG_REASON = re.compile(r"#\s*long:\s*\S.{8,}")

_ROW = re.compile(r"^\|\s*`([^`]+)`[^|]*\|([^|]*)\|")
_NAME = re.compile(r"`([A-Za-z_][\w]*)`")


def table_rows(text: str) -> dict[str, set[str]]:
    """Folder (``amp/parser/search/``, ``views/``; ``app.py`` for the entry point) → the module
    names its row lists, from the section "What each folder holds"."""
    section = text.split("## What each folder holds", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in section.splitlines():
        match = _ROW.match(line)
        if match is None:
            continue
        folder, cell = match.group(1).strip(), match.group(2)
        rows.setdefault(folder, set()).update(_NAME.findall(cell))
    return rows


def code_folders(root: Path = ROOT) -> dict[str, set[str]]:
    """Folder → the modules it holds (``__init__`` aside), for every folder of CODE_ROOTS with modules."""
    folders: dict[str, set[str]] = {}
    for top in CODE_ROOTS:
        for path in sorted((root / top).rglob("*.py")):
            if path.name == "__init__.py":
                continue
            folder = path.parent.relative_to(root).as_posix() + "/"
            folders.setdefault(folder, set()).add(path.stem)
    return folders


def table_mismatches(text: str, root: Path = ROOT) -> list[str]:
    rows, real = table_rows(text), code_folders(root)
    found = []
    for folder in sorted(real.keys() | (rows.keys() - {"app.py"})):
        listed, there = rows.get(folder), real.get(folder, set())
        if listed is None:
            found.append(f"{folder}: no row in the table (it holds {', '.join(sorted(there))})")
            continue
        found += [f"{folder}{name}.py: not in its row" for name in sorted(there - listed)]
        found += [f"{folder}{name}.py: in the table but not in the code" for name in sorted(listed - there)]
    return found


def test_every_module_is_in_the_table_and_every_listed_module_exists() -> None:
    assert table_mismatches(DOC.read_text(encoding="utf-8")) == []


def test_the_table_check_sees_a_missing_and_an_extra_module(tmp_path: Path) -> None:
    (tmp_path / "amp" / "logic").mkdir(parents=True)
    for name in ("lexicon", "reader"):
        (tmp_path / "amp" / "logic" / f"{name}.py").write_text("")
    doc = ("## What each folder holds\n\n| folder | modules | holds |\n|---|---|---|\n"
           "| `amp/logic/` | `lexicon`, `canonical` | words |\n")
    assert table_mismatches(doc, tmp_path) == [
        "amp/logic/reader.py: not in its row",
        "amp/logic/canonical.py: in the table but not in the code",
    ]


# -- every path and module the page names exists -----------------------------------------------------

_PATH = re.compile(r"`((?:amp|ui|views|tests|bench|docs)/[\w./-]*|app\.py|run\.sh|pyproject\.toml)`")
_DOTTED = re.compile(r"`((?:amp|ui)\.[\w.]+)(?:\(\))?`")


def _top_level_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            names |= {a.asname or a.name for a in node.names}
    return names


def dotted_exists(dotted: str, root: Path = ROOT) -> bool:
    """``amp.parser.engines.register_engine``: a module, or a top-level name (or a class's attribute)
    of the longest module prefix."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = root.joinpath(*parts[:cut])
        module = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if module.is_file():
            rest = parts[cut:]
            if not rest:
                return True
            if rest[0] not in _top_level_names(module):
                return False
            if len(rest) == 1:
                return True
            tree = ast.parse(module.read_text(encoding="utf-8"))
            cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == rest[0]), None)
            return cls is not None and rest[1] in {
                getattr(n, "name", None) or getattr(getattr(n, "target", None), "id", None) for n in cls.body}
    return False


def missing_names(text: str, root: Path = ROOT) -> list[str]:
    found = [f"`{p}` does not exist" for p in sorted(set(_PATH.findall(text)))
             if not (root / p.rstrip("/")).exists()]
    found += [f"`{d}` names no module or name" for d in sorted(set(_DOTTED.findall(text)))
              if not dotted_exists(d, root)]
    return found


def test_every_path_and_module_the_page_names_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert len(_PATH.findall(text)) + len(_DOTTED.findall(text)) >= 40
    assert missing_names(text) == []


def test_the_name_check_sees_a_stale_path_and_a_stale_name() -> None:
    text = ("`amp/parser/parser.py` and `amp.parser.parser.Parser` hold; `amp/parser/gone.py` and "
            "`amp.parser.parser.NoSuchThing` do not.")
    assert missing_names(text) == ["`amp/parser/gone.py` does not exist",
                                   "`amp.parser.parser.NoSuchThing` names no module or name"]


# -- the size rule: a long module or function says why ---------------------------------------------


def _code_files(root: Path = ROOT) -> list[Path]:
    return [*(p for top in CODE_ROOTS for p in sorted((root / top).rglob("*.py"))), root / "app.py"]


def long_without_reason(paths: list[Path], root: Path = ROOT) -> list[str]:
    """Modules over MAX_MODULE_LINES lines without a ``# long: …`` line, and functions over
    MAX_FUNCTION_LINES lines (their docstring aside: documentation is never a reason to split)
    without one on (or right above) their ``def`` or first body line."""
    found = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        where = path.relative_to(root).as_posix()
        if len(lines) > MAX_MODULE_LINES and not any(
                LONG_REASON.match(line) for line in lines if line.startswith("# long:")):
            found.append(f"{where}: {len(lines)} lines and no '# long: …' line saying why")
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            first = node.body[0]
            doc = ((first.end_lineno or first.lineno) - first.lineno + 1
                   if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                   and isinstance(first.value.value, str) else 0)
            length = (node.end_lineno or node.lineno) - start + 1 - doc  # its docstring does not count
            if length <= MAX_FUNCTION_LINES:
                continue
            near = lines[max(0, start - 2):node.body[0].lineno]
            if not any(LONG_REASON.search(line) for line in near):
                found.append(f"{where}:{node.lineno} {node.name}: {length} lines and no '# long: …' saying why")
    return found


def test_long_modules_and_functions_say_why() -> None:
    assert long_without_reason(_code_files()) == []


def test_the_size_check_sees_a_long_function_and_a_long_module(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "amp").mkdir()
    short_module = tmp_path / "amp" / "f.py"
    short_module.write_text(f"def f():\n{body}\n\n# long: one table, read top to bottom\ndef g():\n{body}")
    long_module = tmp_path / "amp" / "m.py"
    long_module.write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    assert long_without_reason([short_module, long_module], tmp_path) == [
        f"amp/f.py:1 f: {MAX_FUNCTION_LINES + 1} lines and no '# long: …' saying why",
        f"amp/m.py: {MAX_MODULE_LINES + 1} lines and no '# long: …' line saying why",
    ]


# -- the recipes hold: what "where to add a page" says is what every page has -----------------------


#: Pages reached by a route rather than the navigation, and how an AppTest opens them.
ROUTED = {"teach_student": 'query_params["poll"]'}  # a student's join link ?poll=<CODE>


def page_recipe_gaps(root: Path = ROOT) -> list[str]:
    """Every page script ``views/<name>.py`` is one ``st.Page`` line of app.py and is run by an AppTest
    of ``tests/app/`` (``goto(app, "<name>")`` or ``switch_page("views/<name>.py")``) — the page
    recipe of docs/architecture.md, counted against the code."""
    app = (root / "app.py").read_text(encoding="utf-8")
    app_tests = "\n".join(p.read_text(encoding="utf-8") for p in sorted((root / "tests" / "app").glob("*.py")))
    found = []
    for view in sorted((root / "views").glob("*.py")):
        name, page = view.stem, f"views/{view.stem}.py"
        lines = [line for line in app.splitlines() if f'st.Page("{page}"' in line]
        if len(lines) != 1:
            found.append(f"{page}: {len(lines)} st.Page lines in app.py (the recipe says one)")
        reached = (re.search(rf'goto\(\w+, "{name}"', app_tests) or f'"{page}"' in app_tests
                   or (name in ROUTED and ROUTED[name] in app_tests))
        if not reached:
            found.append(f"{page}: no AppTest in tests/app/ runs it")
    return found


def test_every_page_follows_the_page_recipe() -> None:
    assert page_recipe_gaps() == []


def test_the_page_check_sees_a_page_with_no_line_and_no_test(tmp_path: Path) -> None:
    (tmp_path / "views").mkdir()
    (tmp_path / "tests" / "app").mkdir(parents=True)
    for name in ("shown", "orphan"):
        (tmp_path / "views" / f"{name}.py").write_text("")
    (tmp_path / "app.py").write_text('PAGES = [st.Page("views/shown.py", title="Shown")]\n')
    (tmp_path / "tests" / "app" / "test_shown.py").write_text('goto(at, "shown")\n')
    assert page_recipe_gaps(tmp_path) == ["views/orphan.py: 0 st.Page lines in app.py (the recipe says one)",
                                          "views/orphan.py: no AppTest in tests/app/ runs it"]
