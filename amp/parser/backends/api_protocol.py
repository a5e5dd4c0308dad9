"""The paper's protocol for a model behind an OpenAI-compatible API, as plain functions (no network).

What :mod:`amp.parser.backends.api` sends and how it reads the replies:

* :class:`ApiSettings` — the endpoint, the model name and how it is asked (chat or plain
  completions, log-probs, the grammar), validated once; :meth:`ApiSettings.runtime` is what the
  result cache keys on (endpoint + model + settings, never the API key).
* :func:`chat_messages` — the assembled prompt split into chat messages as the original did for
  GPT-3.5 (docs/paper-notes.md §10): the preamble is the first user message, ``Human:`` lines are
  user messages and ``Computer:`` lines assistant messages (prefixes stripped), the test line last.
* :func:`token_budget` — the generation budget of docs/paper-notes.md §12 (3 × the longest example
  LF, within [64, 256] tokens), with the LF's tokens *estimated* (words and punctuation marks):
  an endpoint's tokenizer is not available here.
* :func:`choice_beam` — one returned choice as a :class:`~amp.parser.core.results.Beam`: its text
  cut at the first line break (a ``Computer:`` prefix a chat model repeats is dropped), the
  per-token steps when the endpoint sent log-probs.  Whether it is an LF is decided later by the
  reader (:func:`amp.evaluation.matching.match_lf`: an unparseable choice is neither reading).
* :func:`forced_from_echo` — the forced score of one LF from the prompt log-probs of an echoed
  completion (P(LF0) by scoring both readings, docs/paper-notes.md §12).
* the replies read into typed records, and the bounds of a conversation with an endpoint (byte
  cap, ``Retry-After``, backoff, terminal controls): :mod:`amp.parser.backends.api_replies`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from lark.exceptions import LarkError

from amp.errors import SettingError
from amp.logic.grammar import lark_parser
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.parser.core.results import Beam, ForcedScore, Runtime, TokenAlternative, TokenStep

#: The prefix of a model spec that names a model behind an API: ``openai:<name>``.
API_PREFIX = "openai:"
#: Environment variables holding the API key, the first set one wins (never written anywhere).
KEY_ENVS = ("AMP_API_KEY", "OPENAI_API_KEY")
#: The environment variable holding the default endpoint (``--api-base``).
BASE_ENV = "AMP_API_BASE"
#: Bounds of the generation budget when the prompt decides it (docs/paper-notes.md §12).
MIN_BUDGET, MAX_BUDGET = 64, 256
#: Requests in flight at once, per backend: default and largest (with ``adaptive``, the most: fewer
#: while replies slow down, :mod:`amp.parser.backends.api_pace`).
DEFAULT_CONCURRENCY, MAX_CONCURRENCY = 4, 32
#: Seconds one request may take in all — connecting and every read — (default, largest; with
#: ``adaptive``, the least: more when the measured replies are slow, up to the largest) and
#: retries of a 408/409/429/5xx, a timed-out or an unreachable request.
DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S = 120.0, 3600.0
DEFAULT_RETRIES, MAX_RETRIES = 3, 10
#: The largest time budget of one command's requests (``--api-budget``, seconds; none by default).
MAX_BUDGET_S = 7 * 24 * 3600.0

_EXAMPLE_LF = re.compile(r"^Computer: ?(\S.*)$", re.MULTILINE)
_PIECES = re.compile(r"\w+|[^\w\s]")
_HUMAN, _COMPUTER = "Human:", "Computer:"


class ApiMode(StrEnum):
    """How the endpoint is asked: ``chat`` (the paper's GPT-3.5 protocol) or ``completions`` (the
    prompt text as is, for base models behind an endpoint)."""

    CHAT = "chat"
    COMPLETIONS = "completions"


def is_api_spec(spec: str | None) -> bool:
    """Whether a model spec names a model behind an API (``openai:<name>``)."""
    return bool(spec) and str(spec).startswith(API_PREFIX)


def api_model_name(spec: str) -> str:
    """``<name>`` of ``openai:<name>`` (a :class:`SettingError` when it is empty)."""
    name = spec[len(API_PREFIX):].strip() if is_api_spec(spec) else ""
    if not name:
        raise SettingError(f"a model behind an API is named openai:<name>, not {spec!r}")
    return name


def normalise_base(url: str) -> str:
    """``http(s)://host[:port][/path]`` without a trailing slash, or a :class:`SettingError`."""
    url = (url or "").strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SettingError(f"the API base URL must look like http://host:port/v1, not {url!r}")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise SettingError("the API base URL must not carry a query, a fragment or credentials "
                           "(the key comes from AMP_API_KEY or OPENAI_API_KEY)")
    return url


def _seconds(value: Any, what: str, maximum: float) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise SettingError(f"the API {what} is a number of seconds, not {value!r}") from None
    if not 0 < seconds <= maximum:
        raise SettingError(f"the API {what} must be above 0 and at most {maximum:g} s, not {value!r}")
    return seconds


def check_timeout(value: Any) -> float:
    """The seconds one request may take in all (``--api-timeout``): above 0, at most :data:`MAX_TIMEOUT_S`."""
    return _seconds(value, "timeout", MAX_TIMEOUT_S)


def check_budget(value: Any) -> float:
    """The seconds all of a command's requests may take (``--api-budget``): above 0, at most :data:`MAX_BUDGET_S`."""
    return _seconds(value, "time budget", MAX_BUDGET_S)


@dataclass(frozen=True)
class ApiSettings:
    """A model behind an OpenAI-compatible endpoint and how it is asked (validated on construction).

    ``logprobs``: ask for token log-probs (choices' token confidences, and P(LF0) by scoring both
    readings where the endpoint echoes prompt log-probs); ``grammar``: send the decoding grammar as
    GBNF (llama.cpp's server; :mod:`amp.logic.gbnf`).  ``concurrency`` bounds the requests in
    flight, ``timeout_s`` one request in all (connecting and every read: a total deadline, not a
    timeout per read), ``retries`` the retries (with backoff) of a 408/409/429/5xx, a timed-out or
    a lost connection, ``budget_s`` (None: no budget) every request of the backend together, from
    its first request on — a command's budget.  ``adaptive`` (default): ``concurrency`` is the
    most in flight and ``timeout_s`` the least a request gets, both following the measured reply
    times (:mod:`amp.parser.backends.api_pace`); off, both are used as given.  The API key is not a setting: it is read from
    :data:`KEY_ENVS` when the client is made and never stored, logged or shown.
    """

    base_url: str
    model: str
    mode: ApiMode = ApiMode.CHAT
    logprobs: bool = True
    grammar: bool = False
    concurrency: int = DEFAULT_CONCURRENCY
    timeout_s: float = DEFAULT_TIMEOUT_S
    retries: int = DEFAULT_RETRIES
    budget_s: float | None = None
    adaptive: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_url", normalise_base(self.base_url))
        if not str(self.model or "").strip():
            raise SettingError("the API model name is empty (use --model openai:<name>)")
        try:
            object.__setattr__(self, "mode", ApiMode(self.mode))
        except ValueError:
            raise SettingError(f"the API mode must be one of {', '.join(ApiMode)}, not {self.mode!r}") from None
        if not 1 <= int(self.concurrency) <= MAX_CONCURRENCY:
            raise SettingError(f"the API concurrency must be 1 to {MAX_CONCURRENCY}, not {self.concurrency!r}")
        object.__setattr__(self, "timeout_s", check_timeout(self.timeout_s))
        if not 0 <= int(self.retries) <= MAX_RETRIES:
            raise SettingError(f"the API retries must be 0 to {MAX_RETRIES}, not {self.retries!r}")
        if self.budget_s is not None:
            object.__setattr__(self, "budget_s", check_budget(self.budget_s))
        if not isinstance(self.adaptive, bool):
            raise SettingError(f"the API's adaptive setting is true or false, not {self.adaptive!r}")

    @property
    def spec(self) -> str:
        return API_PREFIX + self.model

    def runtime(self, client_version: str) -> Runtime:
        """What results depend on besides the call's inputs: endpoint, model name, mode, log-probs,
        grammar (never the key).  The model behind a name may change without notice: results are
        keyed on the name, so a changed model answers from the cache until the cache is cleared."""
        return Runtime(model=f"{self.spec}@{self.base_url}", tokenizer="endpoint", device="api", dtype="api",
                       versions={"api_mode": str(self.mode), "logprobs": str(self.logprobs).lower(),
                                 "grammar": "gbnf" if self.grammar else "none", "openai": client_version})


# -- the prompt ----------------------------------------------------------------------------------------


def chat_messages(prompt: str) -> list[dict[str, str]]:
    """The prompt as chat messages (docs/paper-notes.md §10, GPT-3.5): preamble first, then turns.

    Lines before the first ``Human:`` line form the preamble (the first user message); each
    ``Human:`` line is a user message and each ``Computer:`` line with text an assistant message
    (prefix and surrounding spaces stripped); the final empty ``Computer:`` is dropped, so the test
    sentence is the last message.  Other non-empty lines continue the message before them.
    """
    preamble: list[str] = []
    messages: list[dict[str, str]] = []
    for line in prompt.split("\n"):
        if line.startswith(_HUMAN):
            messages.append({"role": "user", "content": line[len(_HUMAN):].strip()})
        elif line.startswith(_COMPUTER):
            text = line[len(_COMPUTER):].strip()
            if text:
                messages.append({"role": "assistant", "content": text})
        elif not messages:
            preamble.append(line)
        elif line.strip():
            messages[-1]["content"] += "\n" + line.strip()
    head = "\n".join(preamble).strip()
    return ([{"role": "user", "content": head}] if head else []) + messages


def token_budget(prompt: str) -> int:
    """3 × the (estimated) tokens of the prompt's longest example LF, within [64, 256] (§12).

    Tokens are estimated as words and punctuation marks of ``" " + lf + "\\n"`` (an endpoint's
    tokenizer is unknown here; LF words are mostly one token each).  Without examples: 256.
    """
    lfs = _EXAMPLE_LF.findall(prompt)
    if not lfs:
        return MAX_BUDGET
    longest = max(len(_PIECES.findall(lf)) + 1 for lf in lfs)  # + the final line break
    return max(MIN_BUDGET, min(MAX_BUDGET, 3 * longest))


# -- the replies --------------------------------------------------------------------------------------


def lf_text(raw: str) -> str:
    """The LF of a returned choice: its first non-empty line, without a repeated ``Computer:``."""
    for line in (raw or "").split("\n"):
        line = line.strip()
        if line:
            return line[len(_COMPUTER):].strip() if line.startswith(_COMPUTER) else line
    return ""


def in_grammar(text: str, fmt: str, words: OwnWords = NO_WORDS) -> bool:
    """Whether ``" " + text + "\\n"`` is in the decoding grammar (a :class:`Beam`'s ``parses``)."""
    try:
        lark_parser(fmt, "decoding", words).parse(f" {text}\n")  # type: ignore[arg-type]
    except LarkError:
        return False
    return True


def _prob(logprob: Any) -> float:
    try:
        value = float(logprob)
    except (TypeError, ValueError):
        return math.nan
    return math.exp(value) if value > -math.inf else 0.0


def token_step(token: str, logprob: Any, top: Mapping[str, Any] | None, top_n: int) -> TokenStep:
    """One token of a reply with its probability and alternatives; ``prob_grammar`` is NaN (an
    endpoint reports raw probabilities only) and token ids are unknown (``-1``)."""
    alternatives = sorted(((t, _prob(lp)) for t, lp in (top or {}).items()), key=lambda a: -a[1])[:top_n]
    return TokenStep(token=token, token_id=-1, prob=_prob(logprob), prob_grammar=math.nan,
                     alternatives=tuple(TokenAlternative(t, -1, p) for t, p in alternatives))


def cut_steps(steps: tuple[TokenStep, ...], raw: str) -> tuple[TokenStep, ...]:
    """The steps up to the token that holds the choice's first line break (the LF's end)."""
    text = ""
    for i, step in enumerate(steps):
        text += step.token
        if "\n" in step.token and text.strip():
            return steps[: i + 1]
    return steps


def choice_beam(rank: int, raw: str, finished: bool, steps: tuple[TokenStep, ...], fmt: str,
                words: OwnWords = NO_WORDS) -> Beam:
    """One returned choice as a beam: ``logprob`` (and ``score``) the summed token log-probs, NaN
    without log-probs; ``finished`` when the endpoint stopped on its own (not at the budget)."""
    text = lf_text(raw)
    steps = cut_steps(steps, raw)
    logprob = sum(s.logprob for s in steps) if steps else math.nan
    return Beam(rank=rank, text=text, raw_text=raw, token_ids=(), tokens=tuple(s.token for s in steps),
                logprob=logprob, score=logprob, finished=bool(finished and text), parses=in_grammar(text, fmt, words),
                steps=steps)


def forced_from_echo(lf: str, prompt_chars: int, logprobs: Any, top_n: int) -> ForcedScore:
    """The forced score of ``lf`` from an echoed completion of ``prompt + " " + lf + "\\n"``.

    Its tokens are those ending after the prompt's ``prompt_chars`` characters (a token that
    straddles the boundary counts with the LF) and starting before the framed LF's end (the one
    token the completion generated after it is not the LF's).  As in the in-process scoring
    (docs/paper-notes.md §12), the final line break counts with the probability of every token
    that ends the LF the same way (``"\\n"``, ``"\\n\\n"``, …) — here those among the
    ``top_logprobs`` the endpoint returned, a lower bound of the in-process sum.
    """
    tokens = list(logprobs.tokens or [])
    offsets = list(logprobs.text_offset or [])
    values = list(logprobs.token_logprobs or [])
    tops = list(logprobs.top_logprobs or []) + [None] * len(tokens)
    end = prompt_chars + len(lf) + 2  # the framed LF ends here; an echoed completion's own token lies beyond
    picked = [i for i, (tok, off) in enumerate(zip(tokens, offsets, strict=False))
              if off + len(tok) > prompt_chars and off < end]
    if not picked or any(values[i] is None for i in picked):
        raise ValueError("the endpoint returned no log-probs for the LF's tokens")
    steps = [token_step(tokens[i], values[i], tops[i], top_n) for i in picked]
    last_top = tops[picked[-1]] or {}
    if tokens[picked[-1]].strip("\n") == "" and last_top:
        ends = {t: lp for t, lp in last_top.items() if t and t.strip("\n") == ""}
        ends[tokens[picked[-1]]] = values[picked[-1]]
        merged = min(1.0, sum(_prob(lp) for lp in ends.values()))
        steps[-1] = TokenStep(token=steps[-1].token, token_id=-1, prob=merged, prob_grammar=math.nan,
                              alternatives=steps[-1].alternatives)
    sums = sum(s.logprob for s in steps)
    return ForcedScore(lf=lf, token_ids=(), tokens=tuple(s.token for s in steps), steps=tuple(steps),
                       sum_logprob=sums, mean_logprob=sums / len(steps), sum_logprob_grammar=math.nan,
                       min_prob=min(s.prob for s in steps), min_prob_grammar=math.nan)
