"""Ctrl-C ends ``amp parse`` within 1.5 s, even inside llama.cpp (issue #44 point 5).

Before, a SIGINT waited for the C call under way (llama.cpp loading the GGUF, or decoding a
512-token chunk of the prompt) and then for the interpreter's teardown: 2.2–2.9 s during the
search, 5.8–7.7 s during start-up.  :mod:`amp.cli.interrupt` watches for the signal from a thread
of its own and ends the process once the main thread has had :data:`~amp.cli.interrupt.GRACE_S`.

* The watcher on its own (no model): a Python process blocked in one long C call
  (``hashlib.pbkdf2_hmac`` holds no Python frame for seconds) inside :func:`watched` ends within
  the limit with the one line and status 130; the same process with a SIGINT handler of its own is
  left alone (``amp app`` and ``amp serve`` install theirs); leaving :func:`watched` restores the
  previous wakeup fd and handler for unraisable exceptions.
* A real ``python -m amp parse`` on the embedded GGUF (llama.cpp engine): SIGINT as soon as the
  model file is mapped (start-up), two seconds later (the prompt's evaluation, on two cores), and
  in the search (after half the CPU seconds a like search took, measured first); each time one ``error: interrupted`` line, nothing on stdout, status
  130, within :data:`LIMIT_S` of the signal, and the result cache opens with nothing half-written.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest

from amp.cli.interrupt import EXIT_INTERRUPTED, INTERRUPTED_LINE, watched

REPO = Path(__file__).resolve().parents[2]
#: The issue's bound, from the signal to the process's exit.
LIMIT_S = 1.5

# -- the watcher on its own ---------------------------------------------------------------------------

_BLOCKED = textwrap.dedent("""
    import hashlib, signal, sys
    from amp.cli.interrupt import watched
    if sys.argv[1] == "own-handler":
        signal.signal(signal.SIGINT, lambda *_: print("own handler", flush=True))
    with watched():
        print("ready", flush=True)
        hashlib.pbkdf2_hmac("sha256", b"x", b"y", int(sys.argv[2]))  # one C call, seconds long
        print("done", flush=True)
""")


def _blocked(handler: str, iterations: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _BLOCKED, handler, str(iterations)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    time.sleep(0.2)  # inside the C call
    return proc


def _interrupt(proc: subprocess.Popen[str]) -> tuple[float, str, str]:
    """SIGINT to a running ``proc``: seconds until it exited, its stdout and stderr."""
    assert proc.poll() is None, "the process ended before the signal"
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return time.monotonic() - sent, out, err


def test_a_sigint_inside_a_long_c_call_ends_the_process_with_one_line() -> None:
    proc = _blocked("default", 30_000_000)  # a minute and more on any machine
    took, out, err = _interrupt(proc)
    assert (proc.returncode, out, err) == (EXIT_INTERRUPTED, "", f"{INTERRUPTED_LINE}\n")
    assert took <= LIMIT_S, f"exited {took:.2f} s after the signal"


def test_a_command_with_its_own_sigint_handler_is_left_alone() -> None:
    proc = _blocked("own-handler", 3_000_000)  # a few seconds
    took, out, err = _interrupt(proc)
    assert proc.returncode == 0 and out == "own handler\ndone\n" and err == "", (out, err)


def test_leaving_the_watch_restores_the_wakeup_fd_and_the_unraisable_hook() -> None:
    hook = sys.unraisablehook
    with watched():
        inside = signal.set_wakeup_fd(-1)
        signal.set_wakeup_fd(inside)
        assert inside != -1 and sys.unraisablehook is not hook
    assert signal.set_wakeup_fd(-1) == -1 and sys.unraisablehook is hook


# -- amp parse on the llama.cpp engine ----------------------------------------------------------------


def _gguf() -> Path:
    pytest.importorskip("llama_cpp")
    from amp.parser.core.errors import ModelLoadError
    from amp.parser.models.embedded import default_gguf

    try:
        return default_gguf()
    except ModelLoadError as exc:
        pytest.skip(f"the embedded GGUF is not available: {exc}")


def _prompt_file(tmp_path: Path, k: int, sentence: str = "the man saw the boy with the telescope") -> Path:
    from amp.prompts import mixed_prompt
    from amp.teaching.prompt_file import prompt_text

    path = tmp_path / f"prompt-{k}-{len(list(tmp_path.iterdir()))}.txt"
    path.write_text(prompt_text(mixed_prompt(sentence, 0.5, seed=0, k=k)), encoding="utf-8")
    return path


def _parse(prompt: Path, *extra: str) -> subprocess.Popen[str]:
    """``python -m amp parse`` on the embedded GGUF with llama.cpp (the test's cache and models)."""
    return subprocess.Popen([sys.executable, "-m", "amp", "parse", "--engine", "llama.cpp", "--prompt-file",
                             str(prompt), *extra], cwd=REPO, env=dict(os.environ),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _loading(proc: subprocess.Popen[str], gguf: Path) -> float:
    """Wait (bounded) until llama.cpp has mapped the model file in ``proc``: the model is loading."""
    deadline = time.monotonic() + 180
    maps = Path(f"/proc/{proc.pid}/maps")
    while True:
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "the model did not start loading in 180 s"
        try:
            if str(gguf) in maps.read_text(errors="replace"):
                return time.monotonic()
        except OSError:
            pass
        time.sleep(0.02)


def _assert_interrupted(proc: subprocess.Popen[str], when: str) -> None:
    took, out, err = _interrupt(proc)
    assert proc.returncode == EXIT_INTERRUPTED and out == "" and err == f"{INTERRUPTED_LINE}\n", \
        (when, proc.returncode, out[-500:], err[-2000:])
    assert took <= LIMIT_S, f"{when}: exited {took:.2f} s after the signal"


pytestmark_linux = pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/<pid>/maps")


@pytestmark_linux
@pytest.mark.parametrize("after_s", [0.0, 2.0], ids=["loading", "prompt"])
def test_ctrl_c_during_start_up_ends_amp_parse_at_once(after_s: float, tmp_path: Path) -> None:
    gguf = _gguf()
    proc = _parse(_prompt_file(tmp_path, 10), "--no-cache")  # a 700-token prompt: two long C calls
    try:
        time.sleep(max(0.0, _loading(proc, gguf) + after_s - time.monotonic()))
        _assert_interrupted(proc, f"{after_s} s after the model file was mapped")
    finally:
        proc.kill()
        proc.communicate()


def _cpu_s(pid: int) -> float | None:
    """CPU seconds ``pid`` has used (user and system, all its threads), None once it is gone: a
    measure of its progress that a loaded machine does not stretch as it stretches the wall clock."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytestmark_linux
def test_ctrl_c_during_the_search_ends_amp_parse_at_once_and_leaves_the_cache_whole(tmp_path: Path) -> None:
    from amp.cache import ResultCache
    from amp.settings import results_dir

    gguf = _gguf()
    search = ("--beams", "3", "--max-new-tokens", "40")  # a short prompt (one call): the run is mostly the search
    whole = _parse(_prompt_file(tmp_path, 2), *search)  # stores its result in the cache
    _loading(whole, gguf)
    start, used = _cpu_s(whole.pid) or 0.0, 0.0
    while whole.poll() is None:  # its CPU seconds from the load to the exit (the search is the most of them)
        used = max(used, (_cpu_s(whole.pid) or 0.0) - start)
        time.sleep(0.02)
    out, err = whole.communicate(timeout=600)
    assert whole.returncode == 0 and "top beam tokens:" in out, err[-2000:]
    stored = ResultCache(results_dir()).tagged_keys()
    assert stored and used > 0
    proc = _parse(_prompt_file(tmp_path, 2, "the boy saw the man with the telescope"), *search)  # a like search
    try:
        _loading(proc, gguf)
        start = _cpu_s(proc.pid) or 0.0
        deadline = time.monotonic() + 600
        while (_cpu_s(proc.pid) or 0.0) - start < 0.5 * used and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        _assert_interrupted(proc, f"after {0.5 * used:.1f} of the {used:.1f} CPU seconds of a like search")
    finally:
        proc.kill()
        proc.communicate()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unreadable entry would be discarded with a CacheWarning
        cache = ResultCache(results_dir())
        assert not cache.read_only and cache.tagged_keys() == stored  # nothing half-written, nothing lost
        assert all(cache.get(key) is not None for key in stored)
