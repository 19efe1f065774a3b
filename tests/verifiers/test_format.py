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
    # a second tag spelled another way is a tag, not content (found by a review: each passed)
    ("<think>x</think><answer><answer >1</answer>", "wrong"),
    ("<think>x</think><answer>1</answer ></answer>", "wrong"),
    ("<think>x</THINK></think><answer>1</answer>", "wrong"),
    ("<think>x</think><answer>1 <Answer>2</Answer></answer>", "wrong"),
    ("<think>x</think><answer/><answer>1</answer>", "wrong"),
    # characters that draw nothing are no content (each passed as not empty)
    ("<think>\u2066</think><answer>\u2069</answer>", "wrong"),  # bidi isolates
    ("<think>\ufe0f</think><answer>\ufe0f</answer>", "wrong"),  # variation selector
    ("<think>\u2800</think><answer>\u3164</answer>", "wrong"),  # braille blank, Hangul filler
    ("<think>\u115f\u1160</think><answer>\u034f</answer>", "wrong"),
    ("<think>\u180e</think><answer>\u061c</answer>", "wrong"),
    ("<think>\U000e0020</think><answer>\U000e0020</answer>", "wrong"),  # a tag character
    ("<think>\x00</think><answer>\x00</answer>", "wrong"),  # controls
    ("<think>\x1b</think><answer>\x7f</answer>", "wrong"),
    # HTML that renders as nothing: a space entity, a comment (a fourth review)
    ("<think>r</think><answer>&nbsp;</answer>", "wrong"),
    ("<think>r</think><answer><!-- --></answer>", "wrong"),
    ("<think>r</think><answer>&#8203;&nbsp;</answer>", "wrong"),
    ("<think>r</think><answer>a &amp; b</answer>", "ok"),
    # real content in any script, and a combining mark on a letter, still counts
    ("<think>a\u0301</think><answer>\uff14</answer>", "ok"),
    ("<think>x</think>\n<answer>\u65e5\u672c</answer>", "ok"),
]


@pytest.mark.parametrize("completion,status", THINK_ANSWER)
def test_think_answer_format(completion, status):
    for name in ("regex", "format"):
        assert get(name)(completion).status == status


def test_format_ignores_a_row_pattern_and_regex_uses_it():
    # a dataset column named 'pattern' replaced the tag check: "anything" passed, even as the
    # gate of a composed reward (found by a review)
    from passband.verifiers import Reward

    assert get("format")("anything", pattern=".*").status == "wrong"
    gated = Reward({"correct": "exact", "fmt": ("format", 0.1)}, gates=["fmt"])
    assert not gated("12", answer="12", pattern=".*").passed
    assert get("regex")("anything", pattern=".*").passed  # the regex verifier is for patterns
    assert get("regex")("<think>a</think><answer>1</answer>").passed  # no pattern: the tags


def test_reference_pattern_overrides_and_bad_pattern_is_error():
    v = get("regex")
    assert v("ANSWER: 12", pattern=r"ANSWER: \d+").passed
    assert v("ANSWER: x", pattern=r"ANSWER: \d+").status == "wrong"
    bad = v("x", pattern="(unclosed")
    assert bad.status == "error" and "pattern" in bad.detail


def test_catastrophic_regex_times_out_instead_of_hanging():
    v = regex_format(r"(a+)+$", timeout=0.5)
    start = time.monotonic()
    # the regex package finishes this one (no match); one it cannot would be a timeout
    assert v("a" * 40 + "!").status in ("wrong", "timeout")
    assert time.monotonic() - start < 2.5


def test_factories_validate_and_print_readably():
    assert repr(tag_format("think", "answer")) == "tag_format('think', 'answer')"
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


def test_exact_with_a_list_of_accepted_answers():
    # the list was compared as its text: "['12', '13']" passed and "12" did not (a review)
    check = get("exact")
    assert check("12", answer=["12", "13"]).passed and check(" 13. ", answer=["12", "13"]).passed
    assert check("['12', '13']", answer=["12", "13"]).status == "wrong"
    assert check("14", answer=("12", "13")).status == "wrong"
    assert (
        check("12", answer=[]).status == "error" and check("12", answer=[["12"]]).status == "error"
    )


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


def test_exact_reads_numeric_golds_and_refuses_missing_ones():
    # None and NaN (a missing cell) were gold answers: "None" and "nan" passed; a float column's
    # 12.0 failed "12" (a review)
    check = get("exact")
    assert check("None", answer=[None, "x"]).status == "error"
    assert check("nan", answer=float("nan")).status == "error"
    assert check("12", answer=12.0).passed and check("12.5", answer=12.5).passed
    assert check("True", answer=True).passed


def test_a_looping_completion_cut_off_is_judged_not_masked():
    """Stop 36 (a review): under ``re`` this 168,000-character loop made the template's regex a
    masked timeout, which also escaped the overlong penalty of a composed reward."""
    pattern = r"^<think>.*?</think>\s*<answer>.*?</answer>$"
    looping = (
        "<think>compute 6*7</think>\n<answer>41</answer>\n"
        + "</think><answer>41</answer>\n" * 6000
        + "</think><answer>4"
    )
    assert get("regex")(looping, pattern=pattern).status == "wrong"
    assert get("regex")("<think>ok</think>\n<answer>42</answer>", pattern=pattern).passed


@pytest.mark.parametrize(
    "blank",
    [
        "&#x20;",
        "&Tab;",
        "&NewLine;",
        "&#032;",
        "&shy;",
        "&ZeroWidthSpace;",
        "&#X200B;",
        "&#x3000;",
        "<span></span>",
        "<br>",
    ],
)
def test_an_answer_of_blank_entities_or_empty_tags_is_empty(blank):
    """Stop 36 (a review): only a few blank entities were known; the rest counted as an answer."""
    assert get("format")(f"<think>ok</think><answer>{blank}</answer>").status == "wrong"
    for shown in ("42", "&lt;b&gt;", "<b>42</b>"):
        assert get("format")(f"<think>ok</think><answer>{shown}</answer>").passed


def test_a_reasoning_block_of_a_blank_musical_symbol_is_empty():
    from passband.verifiers import get

    assert not get("format")("<think>\U0001d159</think><answer>5</answer>").passed
    assert not get("format")("<think>\u180e\u17b4</think><answer>5</answer>").passed
