"""docs/metrics.md describes every field the trainer writes, and nothing it does not write."""

import json
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"
TIS = Path(__file__).resolve().parents[2] / "trainer" / "tis.py"


def _documented(section: str) -> set[str]:
    """The field names in the first column of the tables of one ``##`` section of the doc."""
    text = DOC.read_text().split(section, 1)[1].split("\n## ", 1)[0]
    names = set()
    for row in re.findall(r"^\| (`.*?) \|", text, re.MULTILINE):
        names.update(re.findall(r"`([^`]+)`", row))
    return names


def _covered(key: str, documented: set[str]) -> bool:
    """``key`` is named in the doc, or matches a pattern there (``<term>``: one path segment)."""
    patterns = [
        "[^/]+".join(map(re.escape, re.split(r"<[^>]+>", d))) for d in documented if "<" in d
    ]
    return key in documented or any(re.fullmatch(p, key) for p in patterns)


def test_every_logged_field_is_documented_and_every_documented_one_is_logged(tiny, tmp_path):
    from passband.trainer import GRPOConfig, GRPOTrainer
    from passband.verifiers import Reward, overlong

    tokenizer = tiny.tokenizer()
    model = tiny.model(tokenizer)
    rows = [{"prompt": f"{i}+{i}=", "answer": str(2 * i)} for i in range(24)]
    reward = Reward.from_verifier("exact", penalties=[overlong(max_length=6, cache=2)])
    config = GRPOConfig(
        group_size=4,
        prompts_per_step=4,
        max_new_tokens=6,
        learning_rate=1e-3,
        beta=0.01,  # a reference and its KL
        pretrained=False,
        max_steps=2,
        output_dir=str(tmp_path / "runs" / "grpo"),
        progress=False,
    )
    GRPOTrainer(model, tokenizer, rows, reward, config).train()
    run = tmp_path / "runs" / "grpo"
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    groups = [json.loads(x) for x in (run / "groups.jsonl").read_text().splitlines()]
    logged = set().union(*map(set, lines))
    assert {"reward/correct", "reward_scale/overlong", "kl", "curriculum/pool/fresh"} <= logged

    documented = _documented("## `metrics.jsonl`")
    missing = sorted(k for k in logged if not _covered(k, documented))
    assert not missing, f"docs/metrics.md does not describe: {missing}"
    # the other way: a documented field is logged here, or only by a sampler that returns
    # log-probs (vLLM: trainer/tis.py writes those)
    stale = sorted(
        d
        for d in documented
        if "<" not in d and d not in logged and f'"{d}"' not in TIS.read_text()
    )
    assert not stale, f"docs/metrics.md describes fields the trainer does not write: {stale}"
    # ``row`` only where skip_bad_rows shifted positions (tests/trainer/test_rows_and_prompts.py)
    assert set().union(*map(set, groups)) | {"row"} == _documented("## `groups.jsonl`")

    # the doc's example runs against this run directory
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL).group(1)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("[(1, ") and "(2, " in done.stdout
