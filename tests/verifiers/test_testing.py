"""The conformance kit passes good verifiers and names what is wrong with bad ones."""

import random
import re
import time

import pytest

from passband.verifiers import Reward, Verdict, get, overlong, tag_format
from passband.verifiers.testing import HOSTILE_COMPLETIONS, check_verifier

FEW = ("", "x" * 100_000, "\ud800", "The answer is 42", "\\boxed{" * 100)


@pytest.mark.parametrize(
    "verifier,reference",
    [
        (get("exact"), {"answer": "42"}),
        (get("regex"), {}),
        (get("json_schema"), {"schema": {"type": "object"}}),
        (
            Reward(
                {"correct": "exact", "format": (tag_format("answer"), 0.2)},
                penalties=[overlong(100, 20)],
            ),
            {"answer": "1"},
        ),
    ],
)
def test_builtin_verifiers_conform(verifier, reference):
    report = check_verifier(
        verifier, reference, score_range=None if isinstance(verifier, Reward) else (0, 1)
    )
    assert report.ok and report.picklable
    assert report.checks == 1 + 2 * len(HOSTILE_COMPLETIONS)


def _shaped(completion, **_):
    return 0.7 if completion[:1].isdigit() else 0.1


def test_verifier_that_raises_is_reported():
    with pytest.raises(AssertionError) as info:
        check_verifier(eval, completions=FEW)  # picklable, raises SyntaxError on most inputs
    message = str(info.value)
    assert "raised SyntaxError" in message and "check_verifier(eval)" in message


def test_unpicklable_nondeterministic_and_wrong_type_are_reported():
    def coin(completion, **reference):
        return Verdict.ok() if random.random() < 0.5 else Verdict.wrong()

    random.seed(1)
    report = check_verifier(coin, completions=["same"] * 12, strict=False)
    assert not report.picklable
    assert any("not picklable" in f for f in report.failures)
    assert any("not deterministic" in f for f in report.failures)

    report = check_verifier(lambda c, **r: "1.0", completions=FEW, strict=False)
    assert any(
        "returned str, not a Verdict, a bool or a finite number" in f for f in report.failures
    )
    report = check_verifier(lambda c, **r: float("nan"), completions=FEW, strict=False)
    assert any("non-finite number nan" in f for f in report.failures)
    # a plain shaped reward is a reward the trainer takes: it conforms (its numbers in range)
    assert check_verifier(_shaped, completions=FEW).ok
    assert not check_verifier(lambda c, **r: 3, completions=["a"], strict=False).ok  # out of range

    report = check_verifier(lambda c, **r: Verdict(2.0, "ok"), completions=["a"], strict=False)
    assert any("outside [0.0, 1.0]" in f for f in report.failures)


def test_hanging_verifier_is_bounded_in_a_worker():
    catastrophic = re.compile(r"(x+x+)+y").match  # picklable, backtracks forever on long x runs
    start = time.monotonic()
    report = check_verifier(catastrophic, completions=["x" * 5000], timeout=0.5, strict=False)
    assert time.monotonic() - start < 4
    assert report.picklable
    assert report.failures and "no answer within 0.5 s (worker killed)" in report.failures[0]


def test_a_verifier_that_hangs_on_every_input_is_given_up_after_three():
    """It used to wait the full bound on each of the ~25 hostile inputs (about 2 minutes at
    the default 5 s); after 3 inputs past the bound the rest are skipped, and said."""
    hang = re.compile(
        r"(.*.*)*\d"
    ).match  # picklable; backtracks for ages on any long digit-free text
    start = time.monotonic()
    texts = ["a" * 60 + "!"] * 8
    report = check_verifier(hang, completions=texts, timeout=0.3, strict=False)
    assert time.monotonic() - start < 4
    assert report.checks <= 1 + 3 and len(report.failures) == 3
    assert (
        "stopped after 3 inputs ran past the 0.3 s bound, 5 inputs not checked"
        in (report.failures[-1])
    )
    report = check_verifier(lambda c, **r: float("nan"), completions=["a"], strict=False)
    assert report.failures[-1] == "input 'a': returned the non-finite number nan"  # not "raised"


def test_slow_unpicklable_verifier_is_abandoned_after_timeout():
    def slow(completion, **reference):
        time.sleep(2 if len(completion) > 10 else 0)
        return Verdict.ok()

    start = time.monotonic()
    report = check_verifier(slow, completions=["short", "x" * 20], timeout=0.3, strict=False)
    assert time.monotonic() - start < 1.5
    assert any("no answer within 0.3 s" in f for f in report.failures)


class _Liar:
    """Declares that it always returns a Verdict, then returns plain numbers."""

    returns_verdict = True

    def __call__(self, completion, **_):
        return 0.25


class _Honest(_Liar):
    def __call__(self, completion, **_):
        return Verdict(0.25, "wrong", "")


def test_a_declared_returns_verdict_is_checked():
    """The declaration made pass rates skip success_threshold; nothing checked it."""
    report = check_verifier(_Liar(), completions=["a", "b"], strict=False)
    assert report.failures and all("declares returns_verdict = True" in f for f in report.failures)
    assert check_verifier(_Honest(), completions=["a", "b"], strict=False).ok
