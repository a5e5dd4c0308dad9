"""The project as a Python package (pyproject.toml): an installable wheel with the ``amp``
command, ``--version``, a cache that does not land in site-packages, and the checks CI runs
(ruff, mypy) failing on planted errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

import amp.settings as amp_settings
from amp.cli import app as app_cli
from amp.cli import build_parser, main
from amp.version import __version__

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
VENV_BIN = Path(sys.executable).parent


def _requirement_name(req: str) -> str:
    return re.split(r"[\s\[<>=!~;]", req, maxsplit=1)[0].lower().replace("_", "-")


# -- metadata ---------------------------------------------------------------------------------------


def test_pyproject_declares_the_package_the_command_and_the_extras() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == "amp-explorer"
    assert project["scripts"] == {"amp": "amp.cli:main"}
    assert project["requires-python"] == ">=3.11"
    names = {_requirement_name(r) for r in project["dependencies"]}
    assert {"torch", "transformers", "lark", "diskcache"} <= names
    # torch exactly pinned: a looser range fetches a CUDA build of several GB on a CPU machine
    assert "torch==2.13.0" in project["dependencies"]
    extras = project["optional-dependencies"]
    assert {_requirement_name(r) for r in extras["serve"]} == {"ray", "llama-cpp-python"}
    assert "streamlit" in {_requirement_name(r) for r in extras["app"]}
    # the llama.cpp engine (issue #29), exactly pinned: its first install compiles llama.cpp
    assert "llama-cpp-python==0.3.36" in extras["app"] and "llama-cpp-python==0.3.36" in extras["serve"]
    assert {"ruff", "mypy", "pytest", "pre-commit"} <= {_requirement_name(r) for r in extras["dev"]}
    # the library itself never needs Streamlit or Ray
    assert not names & {"streamlit", "ray"}


def test_version_is_one_declaration_and_the_cli_prints_it(capsys) -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "amp.version.__version__"}
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip().endswith(f" {__version__}")


def test_app_command_line_runs_the_repository_app_with_its_address_and_port() -> None:
    cmd = app_cli.command("0.0.0.0", 8502, ["--", "--server.headless", "true"])
    assert cmd[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert Path(cmd[4]) == REPO / "asgi.py"  # the app, with the light vote page beside it
    assert cmd[5:] == ["--server.address", "0.0.0.0", "--server.port", "8502", "--server.headless", "true"]


def test_app_command_refuses_a_bad_port_with_one_error_line() -> None:
    proc = subprocess.run([sys.executable, "-m", "amp", "app", "--port", "70000"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("python -m amp app: error: --port")
    assert "Traceback" not in proc.stderr


# -- where an installed package keeps its cache -------------------------------------------------------


def test_cache_root_is_the_repository_cache_in_a_checkout(monkeypatch) -> None:
    monkeypatch.delenv("AMP_CACHE_DIR", raising=False)
    assert amp_settings.source_checkout()
    assert amp_settings.cache_root() == REPO / "cache"


def test_cache_root_of_an_installed_package_is_the_user_cache(monkeypatch, tmp_path) -> None:
    site = tmp_path / "site-packages"
    (site / "amp").mkdir(parents=True)
    (site / "amp" / "__init__.py").write_text("")
    monkeypatch.setattr(amp_settings, "REPO_ROOT", site)
    monkeypatch.delenv("AMP_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert not amp_settings.source_checkout()
    assert amp_settings.cache_root() == (tmp_path / "xdg" / "amp-explorer").resolve()
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "mine"))
    assert amp_settings.cache_root() == (tmp_path / "mine").resolve()


# -- a wheel that works outside the repository ----------------------------------------------------------


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(out), str(REPO)], check=True, capture_output=True, text=True, timeout=300)
    (found,) = out.glob("amp_explorer-*.whl")
    return found


def test_wheel_holds_every_module_the_typed_marker_and_the_declared_requirements(wheel) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = zf.read(metadata).decode()
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        scripts = zf.read(entry_points).decode()
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "amp").rglob("*.py") if "__pycache__" not in p.parts}
    assert modules <= names, sorted(modules - names)
    assert "amp/py.typed" in names
    assert not any(n.startswith(("tests/", "views/", "ui/", "bench/", "cache/")) for n in names)
    assert f"Version: {__version__}" in meta
    requires = {line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Requires-Dist:")}
    for req in PYPROJECT["project"]["dependencies"]:
        assert req.split("  #")[0].strip() in requires
    assert "amp = amp.cli:main" in scripts


def test_wheel_installed_in_a_new_venv_runs_amp_from_any_folder(wheel, tmp_path, capsys) -> None:
    venv = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    purelib = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                   "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    # The dependencies come from this test run's environment (no network, no torch download):
    # a .pth line appends its site-packages *after* the new venv's own, and .pth files found there
    # (this checkout's editable install) are not processed, so `amp` can only be the wheel's.
    (purelib / "_amp_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--no-deps", "--no-index", "--ignore-installed", str(wheel)], check=True, capture_output=True, text=True, timeout=300)
    amp_cmd = venv / "bin" / "amp"
    assert amp_cmd.is_file()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AMP_CACHE_DIR", "AMP_MODELS_DIR")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(amp_cmd), *args], cwd=elsewhere, env=env, input=stdin,
                              capture_output=True, text=True, timeout=120)

    where = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import amp, amp.settings as s; print(amp.__file__); print(s.cache_root())"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, check=True).stdout.split("\n")
    assert Path(where[0]).is_relative_to(venv), where
    assert Path(where[1]) == (tmp_path / "xdg" / "amp-explorer").resolve()

    assert run("--version").stdout.strip() == f"amp {__version__}"
    gen = run("generate", "--type", "pp", "--n", "3", "--seed", "1")
    assert gen.returncode == 0, gen.stderr
    records = [json.loads(line) for line in gen.stdout.splitlines()]
    # three ambiguous sentences, each with its LF0 and LF1 record; the same as in this checkout
    assert len({r["surface"] for r in records}) == 3 and len(records) == 6
    capsys.readouterr()
    assert main(["generate", "--type", "pp", "--n", "3", "--seed", "1"]) == 0  # this checkout, in this process
    assert gen.stdout == capsys.readouterr().out
    canon = run("canon", "--mode", "logical", stdin="exists x . exists y . man(y) AND boy(x)\n")
    assert canon.returncode == 0, canon.stderr
    assert canon.stdout.strip() == run("canon", stdin="exists y . exists x . boy(x) AND man(y)\n").stdout.strip()
    app = run("app")
    assert app.returncode == 1 and "error: the app's pages are not installed" in app.stderr


# -- the checks CI runs before the tests ---------------------------------------------------------------


def _planted_package(tmp_path: Path, source: str) -> Path:
    (tmp_path / "amp").mkdir()
    (tmp_path / "amp" / "__init__.py").write_text(source)
    (tmp_path / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return tmp_path


def test_ruff_with_the_project_configuration_fails_on_a_planted_lint_error(tmp_path) -> None:
    root = _planted_package(tmp_path, "import os\n")
    proc = subprocess.run([str(VENV_BIN / "ruff"), "check", "."], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 1 and "F401" in proc.stdout
    (root / "amp" / "__init__.py").write_text("import os\n\nprint(os.sep)\n")
    assert subprocess.run([str(VENV_BIN / "ruff"), "check", "."], cwd=root, capture_output=True).returncode == 0


def test_mypy_with_the_project_configuration_fails_on_a_planted_type_error(tmp_path) -> None:
    root = _planted_package(tmp_path, "def f(x: int) -> str:\n    return x\n")
    proc = subprocess.run([str(VENV_BIN / "mypy")], cwd=root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Incompatible return value type" in proc.stdout
    (root / "amp" / "__init__.py").write_text("def f(x: int) -> str:\n    return str(x)\n")
    ok = subprocess.run([str(VENV_BIN / "mypy")], cwd=root, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stdout


def test_run_sh_test_runs_ruff_and_mypy_before_pytest() -> None:
    text = (REPO / "run.sh").read_text(encoding="utf-8")
    test_branch = text[text.index("  test)"):]
    test_branch = test_branch[: test_branch.index(";;")]
    assert test_branch.index("run_checks") < test_branch.index("pytest")
    checks = text[text.index("run_checks() {"):]
    checks = checks[: checks.index("\n}")]
    assert '"$VENV/bin/ruff" check .' in checks and '"$VENV/bin/mypy"' in checks
    assert "set -euo pipefail" in text  # a failing check stops the run before pytest


def test_app_beyond_loopback_gets_a_passphrase_printed_at_start(capsys, monkeypatch) -> None:
    from amp.classroom import teacher_auth

    monkeypatch.setattr(teacher_auth, "_GENERATED", [])  # as in a fresh process: none made yet

    assert teacher_auth.ENV not in app_cli.app_environment("127.0.0.1", {})
    assert app_cli.app_environment("0.0.0.0", {teacher_auth.ENV: "mine"})[teacher_auth.ENV] == "mine"
    env = app_cli.app_environment("0.0.0.0", {})
    assert len(env[teacher_auth.ENV]) >= 20
    assert env[teacher_auth.ENV] in capsys.readouterr().err


def test_requirements_txt_points_at_pyproject_and_installs(tmp_path: Path) -> None:
    """``pip install -r requirements.txt`` installs the project with the app and serve extras; the file
    declares nothing of its own (pyproject.toml stays the one declaration).  The install runs into a
    fresh environment that sees this one's packages (offline: every dependency is already there)."""
    lines = [ln.strip() for ln in (REPO / "requirements.txt").read_text(encoding="utf-8").splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    assert lines == ["-e .[app,serve]"]
    env = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=120)
    python = env / "bin" / "python"
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  check=True, capture_output=True, text=True, timeout=60).stdout.strip())
    purelib.mkdir(parents=True, exist_ok=True)
    (purelib / "parent.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-index",
                           "--no-build-isolation", "-r", "requirements.txt"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    probe = subprocess.run([str(python), "-c", "import importlib.metadata as m, amp, streamlit, ray.serve; "
                            "print(m.version('amp-explorer'))"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert probe.returncode == 0, probe.stderr[-2000:]
    assert probe.stdout.strip() == __version__
