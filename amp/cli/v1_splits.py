"""``python -m amp v1-splits``: rebuild the released AmP v1 split folders (docs/paper-notes.md §5, §6).

    python -m amp v1-splits --out /tmp/amp-v1
    python -m amp v1-splits --out out/v1 --only fewshot --ratios 0,50,100 --formats fol

Writes ``fewshot/<X>-<100-X>-5k-train-100-perc-ambig_{fol,lisp}/``,
``fewshot/50-50-5k-train-10-perc-ambig_{fol,lisp}/`` and ``zeroshot/<type>_fol/`` under
``--out``.  The AmP licence forbids redistributing the data as text, so the command refuses a
target inside this repository unless git ignores it (``out/`` is ignored).
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from amp.cli.common import fail
from amp.data.splits import FEWSHOT_RATIOS, v1_folders, write_folder
from amp.errors import AmpError
from amp.logic.vocabulary import FORMATS

ONLY_CHOICES: tuple[str, ...] = ("fewshot", "fewshot-10perc", "zeroshot")

#: The repository root (the folder holding the ``amp`` package).
REPO_ROOT = Path(__file__).resolve().parents[2]


def register(subparsers: argparse._SubParsersAction) -> None:

    parser = subparsers.add_parser(
        "v1-splits",
        help="rebuild the released AmP v1 few-shot and zero-shot split folders",
        description="Regenerate the AmP v1 data folders (few-shot ratio folders, the 10-perc "
        "pair, zero-shot folders) from the generator, replaying the original split scripts "
        "(see docs/v1-splits.md). The output is licensed "
        "data: keep it out of version control.",
    )
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="data root to write into (outside the repo, or a git-ignored path)")
    parser.add_argument("--only", choices=ONLY_CHOICES,
                        help="write one family of folders (default: all)")
    parser.add_argument("--ratios", metavar="X,...",
                        default=",".join(map(str, FEWSHOT_RATIOS)),
                        help="few-shot train ratios in percent (default: 0,10,...,100)")
    parser.add_argument("--formats", metavar="F,...", default=",".join(FORMATS),
                        help="few-shot LF formats: fol, lisp (default: both)")
    parser.set_defaults(func=lambda args: run(args, parser))


def parse_ratios(text: str) -> list[int]:
    """``"0,10,50"`` → ``[0, 10, 50]``; each must be one of the released ratios (§5.2)."""

    try:
        ratios = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--ratios must be comma-separated integers, not {text!r}") from None
    bad = [r for r in ratios if r not in FEWSHOT_RATIOS]
    if bad or not ratios:
        raise ValueError(f"--ratios must be among {','.join(map(str, FEWSHOT_RATIOS))}, "
                         f"got {text!r}")
    return list(dict.fromkeys(ratios))


def parse_formats(text: str) -> list[str]:
    """``"fol,lisp"`` → ``["fol", "lisp"]``."""
    formats = [part.strip() for part in text.split(",") if part.strip()]
    if not formats or any(f not in FORMATS for f in formats):
        raise ValueError(f"--formats must be among {','.join(FORMATS)}, got {text!r}")
    return list(dict.fromkeys(formats))


def committable_target(out: Path, root: Path = REPO_ROOT) -> bool:
    """Whether writing under ``out`` could put licensed data into the repository at ``root``:
    ``out`` lies inside ``root`` and git does not ignore it (§6: never commit the data)."""
    out = out.resolve()
    root = root.resolve()
    if out != root and root not in out.parents:
        return False
    if not (root / ".git").exists():
        return False
    relative = out.relative_to(root).as_posix()
    if relative == ".":
        return True
    # Probe paths like the ones we write: directory patterns (``/out/``) match them even
    # before the folders exist.
    return any(not _git_ignores(root, f"{relative}/{family}/probe.jsonl")
               for family in ("fewshot", "zeroshot"))


def _git_ignores(root: Path, relative: str) -> bool:
    """``git check-ignore`` on one path; without git, only ``out/`` counts as ignored."""
    try:
        found = subprocess.run(["git", "-C", str(root), "check-ignore", "-q", relative],
                               capture_output=True, check=False, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return relative.startswith("out/")
    return found.returncode == 0


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:

    try:
        ratios = parse_ratios(args.ratios)
        formats = parse_formats(args.formats)
    except ValueError as exc:
        return fail(str(exc), parser)
    out = Path(args.out)
    if committable_target(out):
        return fail(f"{out} is inside the repository and not git-ignored; the AmP "
                     "data may not be committed (licence clause 3). Write outside the "
                     "repository or under out/.", parser)
    try:
        for folder in v1_folders(args.only, ratios, formats):
            write_folder(folder, out)
            counts = "  ".join(f"{name.removesuffix('.jsonl')} {n}"
                               for name, n in folder.line_counts().items())
            print(f"{folder.path}  {counts}")
    except BrokenPipeError:  # stdout closed early (``| head``): the dispatcher handles it
        raise
    except (AmpError, OSError) as exc:
        return fail(str(exc), parser)
    return 0
