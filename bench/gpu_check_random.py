"""Random-weight models of real shapes for ``bench/gpu_check.py --random-weights`` (issue #33).

A GPU machine that reaches no registry and receives at most 64 MiB cannot get the embedded
model's weights (a 253 MB GGUF, 1.07 GB converted).  Speed and memory do not depend on the
weights' values, only on their shapes, so the check builds each model from its config with
seeded random weights, on the device, and runs the parser's real search on it:

* ``270m`` — the embedded model's own architecture (Gemma 3 270M's config, as carried);
* ``1b`` — Gemma 3 1B's text shape (hidden 1152, 26 layers, 4 query heads, 1 key/value head);
* ``7b`` — a 7B-class shape: Gemma 3 12B's layer width (hidden 3840, 16 query / 8 key/value
  heads, MLP 15360) at 28 layers, about 7.3 B parameters;

all with the embedded model's 262k tokenizer (so the grammar masks, the output layer and the
prompts are those of the real model).  ``tiny`` is the small float32 shape of the CUDA = CPU
check (:mod:`gpu_check_parity`) and of the tests.

**Pinned generation lengths.**  A random model under the grammar writes a random LF and ends it
(the newline that completes the grammar) after a random number of tokens, so its step counts
would be noise.  :func:`pin_lengths` pushes every newline-carrying token's logit down by
:data:`NEWLINE_PENALTY`, so no beam ends before the budget, and the budget is pinned to the
decode steps the real embedded model takes per item (:data:`PINNED_STEPS`, measured with
``bench/search_bench.py``: 44 logical steps per few-shot item, 32 per zero-shot item; README,
*Speed on a laptop CPU*).  Every item then runs exactly that many steps with all five beams
live: the real model's work per item, slightly pessimistic (its beams end one by one).  The
penalty is one indexed subtraction on the output layer's result, which costs nothing next to
the output layer itself.

The model files (``config.json``, ``tokenizer.json``, ``tokenizer_config.json``; no weights) come
from ``--model-files DIR``, else the carried folder (``$AMP_GPU_CARRY/model``, where
``tokenizer.json`` travels gzipped), else the converted default model, else they are read from
the embedded GGUF once (about two minutes) and kept under the models folder.

torch and transformers (and the parser's vocabulary, which loads torch) are imported inside the
functions that use them: ``bench/gpu_check.py`` imports this module before it checks that both
are there, so a machine without them gets its one ``error:`` line instead of a traceback.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from amp.parser import default_model_info
from amp.parser.models.embedded import default_package, default_version
from amp.settings import models_dir

#: Environment variable naming the carried folder (set by its ``run.sh``).
CARRY_ENV = "AMP_GPU_CARRY"
#: The files of a model's description: its config and its tokenizer, no weights.
CONFIG_FILE = "config.json"
TOKENIZER_FILE = "tokenizer.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
MODEL_FILES = (CONFIG_FILE, TOKENIZER_FILE, TOKENIZER_CONFIG_FILE)
#: How ``tokenizer.json`` travels in the carried folder (33 MB as text, about 5 MB gzipped).
TOKENIZER_GZ = TOKENIZER_FILE + ".gz"

#: Decode steps per item of the real embedded model under the parser's beam-5 search
#: (``bench/search_bench.py``; README, *Speed on a laptop CPU*): the random models' budgets.
PINNED_STEPS = {"few": 44, "zero": 32}
#: The budgets under ``--quick`` (a smoke test of every phase, on a CPU too).
QUICK_PINNED_STEPS = {"few": 12, "zero": 8}
#: Subtracted from the logits of newline-carrying tokens, so that no random beam ends its LF early.
NEWLINE_PENALTY = 1.0e4
#: Layers a shape keeps under ``--quick`` (one sliding and one full attention layer): its widths
#: and vocabulary stay, so the CPU smoke test builds and runs every shape in minutes.
QUICK_LAYERS = 2
#: Every sixth layer of a Gemma 3 model attends globally, the others in a sliding window.
GLOBAL_EVERY = 6
#: Config keys that describe a checkpoint rather than a shape.
_CHECKPOINT_KEYS = ("architectures", "dtype", "torch_dtype", "quantization_config", "transformers_version",
                    "_name_or_path", "model_type", "layer_types", "_commit_hash")


@dataclass(frozen=True)
class Shape:
    """One model shape: changes to the embedded model's config (none for its own shape)."""

    name: str
    label: str
    changes: dict[str, Any] = field(default_factory=dict)


SHAPES: dict[str, Shape] = {s.name: s for s in (
    Shape("270m", "Gemma 3 270M (the embedded model's config)"),
    Shape("1b", "1B class (Gemma 3 1B's text shape)", dict(
        hidden_size=1152, intermediate_size=6912, num_hidden_layers=26, num_attention_heads=4,
        num_key_value_heads=1, head_dim=256, query_pre_attn_scalar=256)),
    Shape("7b", "7B class (Gemma 3 12B's layer width at 28 layers)", dict(
        hidden_size=3840, intermediate_size=15360, num_hidden_layers=28, num_attention_heads=16,
        num_key_value_heads=8, head_dim=256, query_pre_attn_scalar=256)),
    Shape("tiny", "tiny (the CUDA = CPU check's and the tests' shape)", dict(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, head_dim=32, query_pre_attn_scalar=32, initializer_range=0.2)),
)}
#: The shapes ``--random-weights`` measures unless ``--shapes`` says otherwise.
DEFAULT_SHAPES = ("270m", "1b", "7b")


def parse_shapes(text: str) -> list[str]:
    """Comma-separated shape names, checked (ValueError names the unknown one)."""
    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [n for n in names if n not in SHAPES]
    if unknown or not names:
        raise ValueError(f"unknown shape {unknown[0] if unknown else text!r}; use {', '.join(SHAPES)}")
    return names


# --------------------------------------------------------------------------- model files


def _has_model_files(folder: Path) -> bool:
    return all((folder / name).is_file() for name in MODEL_FILES)


def unpack_carried(carry: Path, dest: Path) -> Path:
    """The carried ``model/`` folder of ``carry`` unpacked into ``dest`` (``tokenizer.json`` un-gzipped)."""
    src = carry / "model"
    dest.mkdir(parents=True, exist_ok=True)
    for name in (CONFIG_FILE, TOKENIZER_CONFIG_FILE):
        shutil.copyfile(src / name, dest / name)
    with gzip.open(src / TOKENIZER_GZ, "rb") as fin, open(dest / TOKENIZER_FILE, "wb") as fout:
        shutil.copyfileobj(fin, fout)
    return dest


def export_model_files(dest: Path, say: Callable[[str], None] = lambda _m: None) -> str:
    """Write the embedded model's config and tokenizer (no weights) into ``dest``; says from where.

    From the converted default model if it is there, else read from the embedded GGUF (the
    package assembles it in a temporary folder; transformers reads the tokenizer and config
    from its metadata, about two minutes on a CPU, no weights dequantised).
    """
    info = default_model_info()
    dest.mkdir(parents=True, exist_ok=True)
    if info.converted:
        for name in MODEL_FILES:
            shutil.copyfile(Path(info.converted_path) / name, dest / name)
        return f"the converted default model ({info.converted_path})"
    # late: optional dependency (transformers: checked by gpu_check.py)
    from transformers import AutoConfig, AutoTokenizer

    pkg = default_package()
    with tempfile.TemporaryDirectory(prefix="amp-gguf-") as tmp:
        say(f"assembling {pkg.MODEL_NAME} to read its tokenizer and config (about two minutes)")
        pkg.assemble(Path(tmp) / pkg.MODEL_NAME)
        tokenizer = AutoTokenizer.from_pretrained(tmp, gguf_file=pkg.MODEL_NAME)
        config = AutoConfig.from_pretrained(tmp, gguf_file=pkg.MODEL_NAME)
    for attr in ("quantization_config", "_name_or_path"):
        if attr in config.__dict__:
            delattr(config, attr)
    tokenizer.save_pretrained(str(dest))
    config.save_pretrained(str(dest))
    for extra in dest.iterdir():  # only the three files (save_pretrained may add others)
        if extra.name not in MODEL_FILES:
            extra.unlink()
    return f"the embedded GGUF ({info.package} {info.package_version})"


def model_files(given: Path | None, say: Callable[[str], None]) -> tuple[Path, str]:
    """(folder with the config and tokenizer, where it came from); see the module docstring."""
    if given is not None:
        if not _has_model_files(given):
            raise FileNotFoundError(f"--model-files {given} needs {', '.join(MODEL_FILES)}")
        return given, f"--model-files {given}"
    carry = os.environ.get(CARRY_ENV, "").strip()
    if carry:
        dest = unpack_carried(Path(carry), Path(tempfile.mkdtemp(prefix="amp-model-files-")))
        return dest, f"the carried folder {carry}"
    info = default_model_info()
    if info.converted:
        return Path(info.converted_path), f"the converted default model ({info.converted_path})"
    kept = models_dir() / f"gemma-3-270m-files-{default_version()}"
    if not _has_model_files(kept):
        tmp = kept.parent / f".{kept.name}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            export_model_files(tmp, say)
            shutil.rmtree(kept, ignore_errors=True)
            os.replace(tmp, kept)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return kept, f"the embedded GGUF's metadata (kept in {kept})"


def load_tokenizer(folder: Path) -> Any:
    """The tokenizer of ``folder``, left-padded with a pad token, as the parser's loader leaves it."""
    # late: optional dependency (transformers: checked by gpu_check.py)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder))
    tok.padding_side = "left"
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok


def base_config(folder: Path) -> dict[str, Any]:
    """The embedded model's config as a dict (``config.json`` of ``folder``)."""
    data = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{folder / CONFIG_FILE} is not a JSON object")
    return data


# --------------------------------------------------------------------------- models


def layer_types(n: int) -> list[str]:
    """Gemma 3's layer pattern: five sliding-window layers, then one global, repeated."""
    return ["full_attention" if (i + 1) % GLOBAL_EVERY == 0 else "sliding_attention" for i in range(n)]


def shape_config(base: dict[str, Any], shape: Shape, tokenizer: Any, *, quick: bool) -> Any:
    """The Gemma 3 text config of ``shape``: the embedded model's config with the shape's changes,
    the tokenizer's vocabulary and special ids; under ``quick`` cut to :data:`QUICK_LAYERS`
    layers (one sliding, one global)."""
    # late: optional dependency (transformers: checked by gpu_check.py)
    from transformers import Gemma3TextConfig

    values = {k: v for k, v in base.items() if k not in _CHECKPOINT_KEYS}
    values.update(shape.changes)
    if quick:
        values["num_hidden_layers"] = QUICK_LAYERS
        types = ["sliding_attention", "full_attention"]
    else:
        types = layer_types(int(values["num_hidden_layers"]))
    values.update(
        layer_types=types,
        vocab_size=len(tokenizer),
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return Gemma3TextConfig(**values)


def build_model(config: Any, device: str, dtype: str, seed: int) -> Any:
    """A causal LM of ``config`` with seeded random weights, created on ``device`` in ``dtype``.

    The weights are drawn on the device itself (no host copy): the same seed gives the same
    weights on the same kind of device; the CUDA = CPU check builds on the CPU and copies.
    """
    import torch  # late: optional dependency (torch: checked by gpu_check.py)
    from transformers import AutoModelForCausalLM  # late: optional dependency (transformers: as torch)

    torch.manual_seed(seed)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype))
    return model.eval()


def newline_ids(tokenizer: Any) -> list[int]:
    """Ids of every token whose text holds a newline (what ends an LF under the grammar)."""
    # late: optional dependency (torch: checked by gpu_check.py)
    from amp.parser.search.vocab import get_vocabulary

    return [i for i, text in enumerate(get_vocabulary(tokenizer).texts) if text is not None and "\n" in text]


def pin_lengths(model: Any, ids: list[int]) -> Any:
    """Subtract :data:`NEWLINE_PENALTY` from the logits of ``ids`` at the output layer (a forward
    hook; its handle is returned), so random beams run to the pinned budget."""
    import torch  # late: optional dependency (torch: checked by gpu_check.py)

    head = model.get_output_embeddings()
    index = torch.tensor(ids, dtype=torch.long, device=head.weight.device)

    def hook(_module: Any, _inputs: Any, output: Any) -> Any:
        output[..., index] -= NEWLINE_PENALTY
        return output

    return head.register_forward_hook(hook)


def pinned_budget(batch: list[Any], steps: dict[str, int] = PINNED_STEPS) -> int:
    """The pinned generation budget of a batch (one kind: few-shot or zero-shot)."""
    return steps["zero" if batch and batch[0].ratio is None else "few"]


@dataclass
class RandomModel:
    """A built random model, shaped like :class:`amp.parser.LoadedModel` where the check reads it."""

    model: Any
    tokenizer: Any
    source: str
    dtype: str


def random_loader(shape: Shape, base: dict[str, Any], tokenizer: Any, ids: list[int], *, device: str, dtype: str,
                  seed: int, quick: bool) -> Callable[[], RandomModel]:
    """A loader for :func:`gpu_check_steps.run_model` that builds ``shape`` with random weights."""

    def load() -> RandomModel:
        started = time.perf_counter()
        config = shape_config(base, shape, tokenizer, quick=quick)
        model = build_model(config, device, dtype, seed)
        pin_lengths(model, ids)
        layers = f"{config.num_hidden_layers} layers" + (" (cut by --quick)" if quick else "")
        return RandomModel(model, tokenizer, f"random weights (seed {seed}), {shape.label}, {layers}, hidden "
                           f"{config.hidden_size}, built in {time.perf_counter() - started:.1f} s", dtype)

    return load
