"""axe-core in the browser tests: the WCAG 2.0/2.1 A and AA rules, run on a Playwright page.

The engine is ``axe.min.js`` of the PyPI package ``axe-playwright-python`` (a dev extra: ``bash
run.sh test`` installs it).  When that package is missing the same axe-core release is taken from
npm (``npm pack axe-core@AXE_VERSION``, once, into ``$AMP_AXE_DIR`` or the artifacts folder); when
neither works the test fails and says how to install it.  The page is never sent anywhere: axe
runs inside Chromium on what the page shows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest

#: The axe-core release bundled by ``axe-playwright-python==0.1.8`` (the npm fallback fetches the same).
AXE_VERSION = "4.12.1"
#: The rule sets checked: WCAG 2.0 and 2.1, levels A and AA.
WCAG_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")
#: Rules checked besides those tags (axe files them under best practices): headings in order, no
#: h4 straight after an h1 (the audit of issue #41 found one).
EXTRA_RULES = ("heading-order",)
_REPO = Path(__file__).resolve().parents[2]
_NPM_DIR = Path(os.environ.get("AMP_AXE_DIR") or Path(os.environ.get("E2E_ARTIFACTS") or _REPO / "artifacts") / "axe")


@dataclass(frozen=True)
class Violation:
    """One failed axe rule on one page: where, which rule, how bad, and the elements that break it."""

    where: str
    rule: str
    impact: str
    summary: str
    targets: tuple[str, ...]
    html: tuple[str, ...]
    why: tuple[str, ...]

    def __str__(self) -> str:
        lines = [f"[{self.where}] {self.rule} ({self.impact}): {self.summary}"]
        for target, snippet, why in zip(self.targets, self.html, self.why, strict=True):
            lines.append(f"    {target}\n        {snippet[:200]}\n        {why}")
        return "\n".join(lines)


def _from_npm() -> str:
    script = _NPM_DIR / f"axe-core-{AXE_VERSION}" / "axe.min.js"
    if script.exists():
        return script.read_text(encoding="utf-8")
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("axe-core is missing: `pip install -e '.[dev]'` (it brings axe-playwright-python), "
                    "or install npm so the test can fetch axe-core itself, or set AMP_SKIP_E2E=1.")
    _NPM_DIR.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([npm, "pack", f"axe-core@{AXE_VERSION}", "--silent"], cwd=_NPM_DIR,
                          capture_output=True, text=True, timeout=300)
    tarball = _NPM_DIR / f"axe-core-{AXE_VERSION}.tgz"
    if done.returncode or not tarball.exists():
        pytest.fail(f"axe-core is missing and `npm pack axe-core@{AXE_VERSION}` failed: "
                    f"{done.stderr.strip()[-500:]} — `pip install -e '.[dev]'` installs it.")
    with tarfile.open(tarball) as tar:
        member = tar.getmember("package/axe.min.js")
        extracted = tar.extractfile(member)
        assert extracted is not None
        data = extracted.read()
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_bytes(data)
    return data.decode("utf-8")


def axe_script() -> str:
    """The source of ``axe.min.js`` (the PyPI package's, else fetched from npm)."""
    try:
        from axe_playwright_python.base import AXE_FILE_PATH  # late: optional dependency (dev extra)
    except ImportError:
        return _from_npm()
    return Path(AXE_FILE_PATH).read_text(encoding="utf-8")


def audit(page, where: str, script: str) -> list[Violation]:
    """The WCAG A/AA violations of what ``page`` shows now (every impact), named ``where``."""
    page.evaluate(script)
    runs = [{"runOnly": {"type": "tag", "values": list(WCAG_TAGS)}, "resultTypes": ["violations"]},
            {"runOnly": {"type": "rule", "values": list(EXTRA_RULES)}, "resultTypes": ["violations"]}]
    violations = [v for options in runs
                  for v in page.evaluate("(options) => axe.run(document, options)", options)["violations"]]
    found = []
    for v in violations:
        nodes = v["nodes"]
        found.append(Violation(
            where, v["id"], v.get("impact") or "?", v["help"],
            tuple(" ".join(map(str, n["target"])) for n in nodes),
            tuple(" ".join(n.get("html", "").split()) for n in nodes),
            tuple((n.get("failureSummary") or "").replace("\n", " ") for n in nodes)))
    return found


def report(violations: list[Violation]) -> str:
    """Every violation, readable: page, rule id, impact, summary, then each element's selector,
    its HTML and what axe says is wrong with it."""
    return f"{len(violations)} accessibility violation(s):\n" + "\n".join(map(str, violations))
