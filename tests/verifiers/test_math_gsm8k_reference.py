"""GSM8K's own reference solutions through ``math``: every one with its ``#### N`` line, and the
unmarked fallback (the line removed) on nearly all. A rule that reads sloppy but right arithmetic
as false (a chain check in the fallback made 60 of them wrong) shows here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from passband.verifiers import get

GSM8K = Path(__file__).resolve().parents[3] / "shared" / "data" / "gsm8k" / "train.jsonl"


@pytest.mark.skipif(not GSM8K.exists(), reason="../shared/data/gsm8k is not beside the checkout")
def test_gsm8k_reference_solutions_pass_marked_and_nearly_all_unmarked():
    math = get("math")
    rows = [json.loads(line) for line in GSM8K.read_text().splitlines()]
    marked = unmarked = 0
    for row in rows:
        work, gold = row["answer"].rsplit("####", 1)
        gold = gold.strip().replace(",", "")
        work = re.sub(r"<<[^>]*>>", "", work)  # the calculator annotations
        marked += math(f"{work}#### {gold}", answer=gold).passed
        unmarked += math(work.strip(), answer=gold).passed
    assert len(rows) == 7473 and marked == 7473
    assert unmarked >= 7130, unmarked  # 7,137 at stop 44's end, 7,138 at stop 45's
