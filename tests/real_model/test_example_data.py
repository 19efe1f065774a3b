"""examples/smollm2: the data script's GSM8K rule and the README commands agree with the configs.

No model is loaded: these check what the README's worked example relies on before it runs.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[2]
GSM8K = REPO.parent / "shared" / "data" / "gsm8k" / "train.jsonl"
EXAMPLES = REPO / "examples" / "smollm2"


def _readme_section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("## A real model on a laptop CPU")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def _steps(answer: str) -> int:
    return len(answer.split("####")[0].strip().splitlines())


@pytest.mark.skipif(not GSM8K.is_file(), reason=f"GSM8K is not at {GSM8K}")
def test_make_data_takes_the_easiest_gsm8k_questions(tmp_path):
    out = tmp_path / "data"
    subprocess.run(
        [
            sys.executable,
            str(EXAMPLES / "make_data.py"),
            "--out",
            str(out),
            "--gsm8k-source",
            str(GSM8K),
        ],
        check=True,
        capture_output=True,
    )
    rows = [json.loads(line) for line in (out / "gsm8k.jsonl").read_text().splitlines()]
    source = [json.loads(line) for line in GSM8K.read_text().splitlines() if line.strip()]
    assert len(rows) == 12
    fewest = min(_steps(r["answer"]) for r in source)
    assert {_steps(r["answer"]) for r in rows} == {fewest}
    # the shortest questions of the fewest steps, shortest first, ties in file order
    expected = sorted(
        (len(r["question"]), i) for i, r in enumerate(source) if _steps(r["answer"]) == fewest
    )[:12]
    got = [r["prompt"][0]["content"] for r in rows]
    assert all(g.startswith(source[i]["question"]) for g, (_, i) in zip(got, expected, strict=True))
    assert all(r["answer"].rsplit("####", 1)[1].strip() for r in rows)
    for name in ("json_extract", "code"):
        assert (out / f"{name}.jsonl").stat().st_size > 0


def test_readme_commands_match_the_example_configs():
    section = _readme_section()
    gsm8k = tomllib.loads((EXAMPLES / "gsm8k.toml").read_text())
    score = re.search(r"passband score (\S+) .*?--max-tokens (\d+) --out (\S+)", section, re.S)
    assert score, "the README section has no passband score command"
    # trained on the scored file, at the scored settings: the priors count in full
    assert gsm8k["data"]["path"] == score.group(3)
    assert gsm8k["trainer"]["max_new_tokens"] == int(score.group(2))
    for config in sorted(EXAMPLES.glob("*.toml")):
        assert f"passband train examples/smollm2/{config.name}" in section
        out_dir = tomllib.loads(config.read_text())["trainer"]["output_dir"]
        if config.stem == "gsm8k":
            assert f"passband report {out_dir}" in section
