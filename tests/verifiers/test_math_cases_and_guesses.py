"""Answers given for one case of a condition, for one branch, or as a guess (stop 39).

``data/math_cases_and_guesses.jsonl`` holds what a review helper wrote against the first version
of these rules: *wrong* rows state another case's or branch's different value, or call the answer
a guess ("For even n the answer is 18; for odd n it is 20.", "\\boxed{18} (else 20)", "That is
my best guess."), and each was graded ``ok`` before; *right* rows are natural completions with
checks, per-unit remarks and guess-and-check working after the answer ("For one hour, it is 30
miles.", "Otherwise, 10 students would have no seat.", "A guess of 10 gives 60 legs, not 56.")
that the first version refused. A second review added 324 right and 39 wrong rows of the same
families (a case rejected right after it, a remark about another case once the answer's case is
settled, "Approximately." after a rounded answer, "as I guessed"); the rows that rule still
gets wrong are listed in the closing note, not here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from passband.verifiers import get

MATH = get("math")
ROWS = [
    json.loads(line)
    for line in (Path(__file__).parent / "data" / "math_cases_and_guesses.jsonl")
    .read_text()
    .splitlines()
]


def test_the_data_holds_both_kinds():
    labels = [r["label"] for r in ROWS]
    assert labels.count("right") >= 400 and labels.count("wrong") >= 90


@pytest.mark.parametrize(
    "row", [r for r in ROWS if r["label"] == "wrong"], ids=lambda r: r["completion"][:60]
)
def test_another_case_a_branch_or_a_guess_is_never_ok(row):
    verdict = MATH(row["completion"], answer=row["gold"])
    assert verdict.status != "ok", verdict.detail


@pytest.mark.parametrize(
    "row", [r for r in ROWS if r["label"] == "right"], ids=lambda r: r["completion"][:60]
)
def test_checks_remarks_and_working_after_the_answer_stay_ok(row):
    verdict = MATH(row["completion"], answer=row["gold"])
    assert verdict.status == "ok", (verdict.status, verdict.detail)
