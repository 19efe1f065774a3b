"""regex/format and exact verifiers: tables of (completion, expected status)."""

import pickle
import time

import pytest

from passband.verifiers import exact_match, get, regex_format, tag_format

THINK_ANSWER = [
    ("<think>2+2 is 4</think><answer>4</answer>", "ok"),
    ("  <think>multi\nline</think>\n\n<answer>4</answer>\n", "ok"),
    ("<think></think><answer></answer>", "wrong"),  # empty blocks earn no format credit
    ("<think>a</think><answer> </answer>", "wrong"),
    ("<think>x<answer>2</answer></think><answer>1</answer>", "wrong"),  # a tag inside another
    ("<think> a<b </think>\n<answer> 3 </answer>", "ok"),
    ("<answer>4</answer>", "wrong"),  # no think
    ("<think>a</think>", "wrong"),  # no answer
    ("<answer>4</answer><think>a</think>", "wrong"),  # wrong order
    ("<think>a</think> so <answer>4</answer>", "wrong"),  # text between the blocks
    ("<think>a</think><answer>4</answer> trailing", "wrong"),
    ("<think><think>a</think><answer>4</answer>", "wrong"),  # nested/duplicated tag
    ("<think>a</think><answer>4</answer><answer>5</answer>", "wrong"),
    ("", "wrong"),
]


@pytest.mark.parametrize("completion,status", THINK_ANSWER)
def test_think_answer_format(completion, status):
    for name in ("regex", "format"):
        assert get(name)(completion).status == status


def test_reference_pattern_overrides_and_bad_pattern_is_error():
    v = get("regex")
    assert v("ANSWER: 12", pattern=r"ANSWER: \d+").passed
    assert v("ANSWER: x", pattern=r"ANSWER: \d+").status == "wrong"
    bad = v("x", pattern="(unclosed")
    assert bad.status == "error" and "pattern" in bad.detail


def test_catastrophic_regex_times_out_instead_of_hanging():
    v = regex_format(r"(a+)+$", timeout=0.5)
    start = time.monotonic()
    assert v("a" * 40 + "!").status == "timeout"
    assert time.monotonic() - start < 2.5


def test_factories_validate_and_print_readably():
    assert (
        repr(tag_format("think", "answer"))
        == "regex_format(tags ('think', 'answer'), fullmatch=True)"
    )
    assert (
        repr(regex_format(r"\d+", fullmatch=False))
        == "regex_format(pattern='\\\\d+', fullmatch=False)"
    )
    with pytest.raises(ValueError, match="tag names"):
        tag_format("a b")
    with pytest.raises(ValueError, match="not a valid regular expression"):
        regex_format("(")
    with pytest.raises(ValueError, match="unknown regex flag"):
        regex_format("x", flags="VERBOSE")
    clone = pickle.loads(pickle.dumps(tag_format("answer")))
    assert clone("<answer>1</answer>").passed


EXACT = [
    ("42", "42", "ok"),
    ("  42. ", 42, "ok"),
    ("Paris", "paris", "ok"),
    ('"Paris"', "Paris", "ok"),
    ("New   York", "new york", "ok"),
    ("ＡＢＣ", "abc", "ok"),  # NFKC full-width
    ("42", "43", "wrong"),
    ("4 2", "42", "wrong"),
    ("", "42", "invalid"),
    ("   ", "42", "invalid"),
]


@pytest.mark.parametrize("completion,answer,status", EXACT)
def test_exact_table(completion, answer, status):
    assert get("exact")(completion, answer=answer).status == status


def test_exact_options():
    assert get("exact")("x").status == "error"  # no answer field
    strict = exact_match(case_sensitive=True)
    assert strict("Paris", answer="paris").status == "wrong"
    tagged = exact_match(pattern=r"<answer>(.*?)</answer>")
    assert tagged("<think>maybe 3</think><answer> 4 </answer>", answer="4").passed
    assert tagged("no tags here", answer="4").status == "invalid"
    assert "pattern='<answer>(.*?)</answer>'" in repr(tagged)


def test_a_tag_holding_only_invisible_characters_is_empty():
    """``\\S`` matched a zero-width space, so ``<answer>\\u200b</answer>`` passed as not empty."""
    from passband.verifiers.format import tag_format

    check = tag_format("think", "answer")
    assert not check("<think>x</think><answer>\u200b</answer>").passed
    assert not check("<think>\u200b\u2060</think><answer>4</answer>").passed
    assert check("<think>\u200bx</think><answer>4</answer>").passed
