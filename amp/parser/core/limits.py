"""Bounds on one request, shared by the library, the CLI, the app and the parser service.

One declaration each; :func:`check_beams` and friends raise :class:`RequestTooLarge` (over a
bound) or :class:`~amp.errors.SettingError` (not a valid value at all: zero, negative, NaN) with
a message naming the setting and its range, so every front end shows the same sentence.  The
:class:`~amp.parser.Parser` facade applies them before any tokenising or model work.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence, Sized
from typing import Any

from amp.errors import SettingError
from amp.logic.reader import MAX_LF_DEPTH as MAX_LF_DEPTH  # the LF reader declares its own depth bound
from amp.parser.core.errors import RequestTooLarge

#: Beams of one search (the distinct top-k method uses up to this width).
MAX_BEAMS = 64
#: Generation budget of one search.
MAX_NEW_TOKENS = 1024
#: Characters of one prompt (checked before tokenising).
MAX_PROMPT_CHARS = 200_000
#: Characters of one LF.
MAX_LF_CHARS = 20_000
#: Prompts / items in one batched call.
MAX_BATCH_ITEMS = 256
#: LFs scored after one prompt in one call.
MAX_FORCED_LFS = 64
#: Samples of one sampling call.
MAX_SAMPLES = 500
#: Items of one sweep job.
MAX_JOB_ITEMS = 50_000
#: Items per model call inside a job.
MAX_JOB_BATCH = 64
#: Bytes of one request body to the parser service.
MAX_BODY_BYTES = 64 * 2**20
#: Beam width of the distinct-interpretations method.
MAX_WIDTH = MAX_BEAMS
#: Examples in one few-shot prompt.
MAX_PROMPT_EXAMPLES = 100
#: The GNMT length-penalty α of a search: 0 (summed log-probs) … this.
MAX_ALPHA = 10.0
#: Sampling temperatures: above 0 and at least this (a smaller one overflows the scaled logits) …
MIN_TEMPERATURE = 0.01
#: … up to this (flatter than uniform to the eye; larger values change nothing visible).
MAX_TEMPERATURE = 100.0
#: Characters of a job item's id and of a job's label.
MAX_ID_CHARS = 300
#: Bytes of a job's ``meta`` (as JSON): what a page attaches to find and rebuild its sweep.
MAX_JOB_META_BYTES = 64 * 2**10
#: Bytes of one job's stored results (its ``results.jsonl``): a job over it stops, failed, saying so.
MAX_JOB_RESULT_BYTES = 256 * 2**20
#: Nesting of any free-form JSON the service takes and stores (a job's ``meta``, a beam to detail):
#: objects and arrays inside one another, ``{"a": [1]}`` is 2 deep (:mod:`amp.parser.core.json_bounds`).
MAX_JSON_DEPTH = 32
#: Jobs kept by the service, finished or not (the oldest finished ones go first beyond this; a new
#: job that only unfinished ones leave no room for is refused) …
MAX_STORED_JOBS = 200
#: … and bytes of every stored job together (likewise).
MAX_JOBS_STORE_BYTES = 2 * 2**30
#: Jobs queued or running at once (a submit beyond it is refused until one finishes or is cancelled).
MAX_UNFINISHED_JOBS = 16
#: Largest seed (seeds are 0 … MAX_SEED, as numpy's generators take them).
MAX_SEED = 2**32 - 1
#: The most tokens a budget derived from the prompt takes (``max_new_tokens=None``,
#: :func:`amp.parser.search.decode.default_max_new_tokens`).
DERIVED_MAX_NEW_TOKENS = 256
#: The cost of one search call, prompts × beams × token budget ("beam-tokens"), checked before any
#: work: each bound alone admits 64 beams × 1,024 tokens, a search that holds a CPU replica for
#: minutes; their product is bounded here (8 prompts × 16 beams × 256 tokens, 1 × 32 × 1,024).
#: Checked once at each boundary: one prompt's cost by the search's own record
#: (:class:`~amp.parser.search.settings.SearchSettings`), a call's prompts × that by the
#: :class:`~amp.parser.Parser` facade (every backend sits behind it) and by the service's request schema.
MAX_SEARCH_COST = 32_768
#: Prompt tokens of one search call, all its prompts together (checked after tokenising, before
#: the first forward pass; each prompt is also bounded by the model's context).
MAX_CALL_PROMPT_TOKENS = 65_536
#: Steps of one integrated-gradients attribution (each is a forward and a backward pass).
MAX_ATTRIBUTION_STEPS = 256
#: Prompt tokens of one attribution (the backward pass holds every layer's activations).
MAX_ATTRIBUTION_TOKENS = 4096
#: Prompt tokens in one forward/backward pass of integrated gradients' path (points × prompt
#: tokens, at least one point): the activations a pass holds are bounded by this, not by the steps.
ATTRIBUTION_PASS_TOKENS = 2048


def _whole(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettingError(f"{name} must be a whole number, not {value!r}")
    return value


def check_count(value: Any, name: str, maximum: int, *, minimum: int = 1) -> int:
    """A whole number in ``minimum … maximum``: ``RequestTooLarge`` above, ``SettingError`` else."""
    value = _whole(value, name)
    if value < minimum:
        raise SettingError(f"{name} must be a whole number from {minimum} to {maximum}, not {value}")
    if value > maximum:
        raise RequestTooLarge(f"{name} is {value}, over the limit of {maximum}")
    return value


def check_beams(beams: Any, name: str = "beams") -> int:
    """Beam size 1 … :data:`MAX_BEAMS`."""
    return check_count(beams, name, MAX_BEAMS)


def check_max_new_tokens(value: Any, name: str = "max_new_tokens") -> int | None:
    """Generation budget 1 … :data:`MAX_NEW_TOKENS`, or None (derived from the prompt)."""
    return None if value is None else check_count(value, name, MAX_NEW_TOKENS)


def check_alpha(value: Any, name: str = "alpha") -> float:
    """The GNMT length-penalty alpha: a number from 0 to :data:`MAX_ALPHA`."""
    try:
        alpha = float(value)
    except (TypeError, ValueError):
        raise SettingError(f"{name} must be a number, not {value!r}") from None
    if not (math.isfinite(alpha) and 0.0 <= alpha <= MAX_ALPHA):
        raise SettingError(f"{name} must be a number from 0 to {MAX_ALPHA:g}, not {value!r}")
    return alpha


def check_temperature(value: Any, name: str = "temperature") -> float:
    """A sampling temperature: a number from :data:`MIN_TEMPERATURE` to :data:`MAX_TEMPERATURE`."""
    try:
        temperature = float(value)
    except (TypeError, ValueError):
        raise SettingError(f"{name} must be a number, not {value!r}") from None
    if not (math.isfinite(temperature) and MIN_TEMPERATURE <= temperature <= MAX_TEMPERATURE):
        raise SettingError(f"{name} must be a number from {MIN_TEMPERATURE:g} to {MAX_TEMPERATURE:g}, not {value!r}")
    return temperature


def check_samples(n: Any, name: str = "samples") -> int:
    """Samples of one sampling call: 1 … :data:`MAX_SAMPLES`."""
    return check_count(n, name, MAX_SAMPLES)


def check_seed(seed: Any, name: str = "seed") -> int:
    """A seed: 0 … :data:`MAX_SEED`."""
    return check_count(seed, name, MAX_SEED, minimum=0)


def check_text(text: Any, name: str, maximum: int) -> str:
    """A string of at most ``maximum`` characters (checked before any tokenising or parsing)."""
    if not isinstance(text, str):
        raise SettingError(f"{name} must be text, not {type(text).__name__}")
    if len(text) > maximum:
        raise RequestTooLarge(f"{name} has {len(text):,} characters, over the limit of {maximum:,}")
    return text


def check_prompt(prompt: Any) -> str:
    """One prompt: at most :data:`MAX_PROMPT_CHARS` characters."""
    return check_text(prompt, "the prompt", MAX_PROMPT_CHARS)


def check_lf(lf: Any) -> str:
    """One LF: at most :data:`MAX_LF_CHARS` characters."""
    return check_text(lf, "the LF", MAX_LF_CHARS)


def check_items(items: Sized, name: str = "batch", maximum: int = MAX_BATCH_ITEMS) -> None:
    """At most ``maximum`` items in one call."""
    if len(items) > maximum:
        raise RequestTooLarge(f"the {name} has {len(items)} items, over the limit of {maximum}")


def search_cost(prompts: int, beams: int, max_new_tokens: int | None) -> int:
    """prompts × beams × token budget (a derived budget counts as :data:`DERIVED_MAX_NEW_TOKENS`)."""
    return prompts * beams * (max_new_tokens or DERIVED_MAX_NEW_TOKENS)


def check_search_cost(prompts: int, beams: int, max_new_tokens: int | None) -> int:
    """A search call within :data:`MAX_SEARCH_COST` (``RequestTooLarge`` naming it otherwise)."""
    cost = search_cost(prompts, beams, max_new_tokens)
    if cost > MAX_SEARCH_COST:
        tokens = max_new_tokens or DERIVED_MAX_NEW_TOKENS
        raise RequestTooLarge(
            f"the search cost {prompts} prompt(s) × {beams} beams × {tokens} tokens = {cost:,} is over the "
            f"limit of {MAX_SEARCH_COST:,} (MAX_SEARCH_COST): use fewer beams, a smaller max_new_tokens or "
            "fewer prompts per call")
    return cost


def check_sampling_cost(n: int, max_new_tokens: int | None) -> int:
    """A sampling call within :data:`MAX_SEARCH_COST`: each of its ``n`` samples counts as a beam
    of the token budget (``RequestTooLarge`` naming the bound otherwise)."""
    cost = search_cost(1, n, max_new_tokens)
    if cost > MAX_SEARCH_COST:
        tokens = max_new_tokens or DERIVED_MAX_NEW_TOKENS
        raise RequestTooLarge(
            f"the sampling cost {n} samples × {tokens} tokens = {cost:,} is over the limit of {MAX_SEARCH_COST:,} "
            "(MAX_SEARCH_COST; each sample counts as a beam): ask for fewer samples or a smaller max_new_tokens")
    return cost


def scoring_cost(lfs: Iterable[str]) -> int:
    """The cost of forcing ``lfs`` after a prompt, in the search's beam-tokens: each LF is one
    sequence of at most its UTF-8 bytes + 2 tokens (a byte-level token covers at least one byte;
    the framing adds a space and a newline), known before tokenising."""
    return sum(len(lf.encode("utf-8")) + 2 for lf in lfs)


def check_scoring_cost(lfs: Sequence[str], what: str) -> int:
    """Forced scoring of ``lfs`` (``what``: how the call names them) within :data:`MAX_SEARCH_COST`."""
    cost = scoring_cost(lfs)
    if cost > MAX_SEARCH_COST:
        raise RequestTooLarge(
            f"the scoring cost of {what} ({len(lfs)} LFs, up to {cost:,} tokens together) is over the limit of "
            f"{MAX_SEARCH_COST:,} (MAX_SEARCH_COST): send fewer or shorter LFs per call")
    return cost


def prompts_per_call(beams: int, max_new_tokens: int | None, wanted: int) -> int:
    """At most ``wanted`` prompts, and no more than one call of :data:`MAX_SEARCH_COST` takes (≥ 1)."""
    return max(1, min(wanted, MAX_SEARCH_COST // search_cost(1, beams, max_new_tokens)))


def check_prompt_tokens(counts: Iterable[int]) -> None:
    """The prompt tokens of one call (its per-prompt counts) within :data:`MAX_CALL_PROMPT_TOKENS`."""
    total = sum(counts)
    if total > MAX_CALL_PROMPT_TOKENS:
        raise RequestTooLarge(f"the call's prompts have {total:,} tokens together, over the limit of "
                              f"{MAX_CALL_PROMPT_TOKENS:,} (MAX_CALL_PROMPT_TOKENS): send fewer or shorter prompts")
