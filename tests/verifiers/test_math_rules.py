"""The ``math`` verifier's rules, one table each: (gold, completion, expected status).

Completions are in the shapes models write (a closing sentence, a boxed answer, several boxes).
Every table mixes right answers with near-misses, so a rule that accepts too much fails here as
surely as one that accepts too little; each table fails on the verifier without its rule.
"""

from __future__ import annotations

import pytest

from passband.verifiers import get

math = get("math")


def _check(gold: str, completion: str, expected: str) -> None:
    verdict = math(completion, answer=gold)
    assert verdict.status == expected, (gold, completion, verdict)


EXACT = [  # exact inputs compared exactly: no tolerance between two exact values
    (
        r"\frac{1}{5^{61}}",
        r"Dividing once more, the probability is $\boxed{\frac{1}{5^{60}}}$.",
        "wrong",
    ),
    (r"\frac{1}{5^{61}}", r"So the answer is $\boxed{5^{-61}}$.", "ok"),
    (r"\frac{1}{3^{501}}", r"Hence the value is $\boxed{\frac{3^{500}+1}{3^{501}}}$.", "wrong"),
    (r"\frac{1}{100!}", r"The ratio simplifies to $\boxed{\frac{1}{99!}}$.", "wrong"),
    (r"\frac{1}{100!}", r"The ratio simplifies to $\boxed{\frac{99!}{100! \cdot 99!}}$.", "ok"),
    (r"\frac{98!}{100!}", r"So $\frac{98!}{100!} = \boxed{\frac{1}{9900}}$.", "ok"),
    (r"\frac{98!}{100!}", r"So $\frac{98!}{100!} = \boxed{\frac{1}{9901}}$.", "wrong"),
    (r"2^{100}", r"The number of subsets is $\boxed{2^{100} + 1}$.", "wrong"),
    (r"10^{-20}", r"The error is at most $\boxed{2 \cdot 10^{-20}}$.", "wrong"),
    (
        r"0.000001",
        r"Rounded, $p = \boxed{0.0000014}$.",
        "wrong",
    ),  # decimals: relative, not 6 places
    (r"\frac{1}{3}", r"Numerically, $\boxed{0.333333}$.", "ok"),  # a decimal approximates
]

SIGNS = [  # a sign flip on a constant such as e or pi is a different answer
    (r"2 - \frac{1}{\mathrm{e}}", r"The limit is $\boxed{2 + \frac{1}{\mathrm{e}}}$.", "wrong"),
    (r"2 - \frac{1}{\mathrm{e}}", r"The limit is $\boxed{2 - \mathrm{e}^{-1}}$.", "ok"),
    (r"2 - \frac{1}{e}", r"The limit is $\boxed{2+e^{-1}}$.", "wrong"),
    (r"\pi - 3", r"Therefore the area is $\boxed{3 - \pi}$.", "wrong"),
    (r"\frac{\pi}{2} - 1", r"Therefore the area is $\boxed{\frac{\pi - 2}{2}}$.", "ok"),
]

ROOTS = [  # a root written with parentheses is still a root
    (r"7", r"So $x = \boxed{7\sqrt(3)}$.", "wrong"),
    (r"7\sqrt{3}", r"So $x = \boxed{7\sqrt(3)}$.", "ok"),
    (r"14", r"So $x = \boxed{7\sqrt(4)}$.", "ok"),
]

SEQUENCES = [  # sequences with an ellipsis: term by term, never on the ellipsis alone
    (r"1:2:3:\ldots", r"The ratio of the areas is $\boxed{2:8:18:\ldots}$.", "wrong"),
    (r"1:2:3:\ldots", r"The ratio of the areas is $\boxed{1:2:3:\ldots}$.", "ok"),
    (r"1, 2, \ldots, n", r"The values are $\boxed{2, 4, 6, \ldots, 2n}$.", "wrong"),
    (r"1, 2, \ldots, n", r"The possible values are $\boxed{1, 2, \dots, n}$.", "ok"),
    (r"1, 3, 5, \ldots", r"So the sequence is $\boxed{1, 3, 5, 7, \ldots}$.", "wrong"),
]

MULTIPART = [  # several boxes, labelled parts, "or" lists: a set for one unknown, a tuple for labels
    (r"(1, 4), (5, 0)", r"The solutions are $\boxed{(1, 4)}$ and $\boxed{(5, 0)}$.", "ok"),
    (r"(1, 4), (5, 0)", r"The solutions are $\boxed{(1, 4)}$ and $\boxed{(0, 5)}$.", "wrong"),
    (r"6, 2", r"So the lengths are $PQ = 6$ and $RS = 2$. The answer is PQ=6, RS=2.", "ok"),
    (r"6, 2", r"So the lengths are $PQ = 2$ and $RS = 6$. The answer is PQ=2, RS=6.", "wrong"),
    (r"m = 3, n = 8", r"Thus $\boxed{m = 3}$ and $\boxed{n = 8}$.", "ok"),
    (r"m = 3, n = 8", r"Thus $\boxed{n = 8}$ and $\boxed{m = 3}$.", "ok"),  # labels, not positions
    (r"m = 3, n = 8", r"Thus $\boxed{m = 8}$ and $\boxed{n = 3}$.", "wrong"),
    (r"-4, 1", r"Factoring, $(x+4)(x-1) = 0$. The roots are x = -4 or x = 1.", "ok"),
    (r"-4, 1", r"Factoring, $(x+4)(x-1) = 0$. The roots are x = 1 or x = -4.", "ok"),
    (r"-4, 1", r"Factoring, $(x-4)(x+1) = 0$. The roots are x = 4 or x = -1.", "wrong"),
    (r"-4, 1", "The answer is x = \u22124 or x = 1", "ok"),  # a Unicode minus
]

INTERVALS = [  # a one-variable relation is the interval it describes
    (r"x \in [-3, 5]", r"Solving both sides, $\boxed{-3 \le x \le 5}$.", "ok"),
    (r"x \in [-3, 5]", r"Solving both sides, $\boxed{-3 < x \le 5}$.", "wrong"),
    (r"[\sqrt{3}, +\infty)", r"Therefore $\boxed{t \geq \sqrt{3}}$.", "ok"),
    (r"[\sqrt{3}, +\infty)", r"Therefore $\boxed{t > \sqrt{3}}$.", "wrong"),
    (
        r"(-\infty, 2) \cup (2, \infty)",
        r"The domain is all reals except 2: $\boxed{x \neq 2}$.",
        "ok",
    ),
    (r"(-\infty, 3) \cup (3, \infty)", r"The domain is $\boxed{x \neq 2}$.", "wrong"),
    # the bound first, and a range written from the top down
    (r"(2, \infty)", r"So $\boxed{2 < x}$.", "ok"),
    (r"(2, \infty)", r"So $\boxed{2 \le x}$.", "wrong"),
    (r"(-\infty, 2)", r"So $\boxed{2 < x}$.", "wrong"),
    (r"(-\infty, 3]", r"So $\boxed{3 \geq x}$.", "ok"),
    (r"(-\infty, 3]", r"So $\boxed{3 > x}$.", "wrong"),
    (r"[-3, 5)", r"So $\boxed{5 > x \ge -3}$.", "ok"),
    (r"[-3, 5)", r"So $\boxed{5 \ge x \ge -3}$.", "wrong"),
    (r"(2, \infty)", r"So $\boxed{2 < x > 1}$.", "wrong"),
    (r"x > 2", r"So $\boxed{(2, \infty)}$.", "ok"),
    (r"2 < x", r"So $\boxed{(2, \infty)}$.", "ok"),
]

EQUATIONS = [  # the same line or curve: the same solution set, or a constant multiple
    (r"2x - y + 3 = 0", r"The line is $\boxed{y = 2x + 3}$.", "ok"),
    (r"x + y = 1", r"Scaling, $\boxed{2x + 2y = 2}$.", "ok"),
    (r"x + y = 1", r"Scaling, $\boxed{2x + 2y = 1}$.", "wrong"),
]

COMPLEX = [  # i is the imaginary unit, whatever the form
    (r"i", r"Since $i^2=-1$, we get $\boxed{\sqrt{-1}}$.", "ok"),
    (r"-1", r"So the product is $\boxed{i^2}$.", "ok"),
    (r"1", r"So the product is $\boxed{i^2}$.", "wrong"),
    (r"i", r"By Euler, $\boxed{e^{i\pi/2}}$.", "ok"),
    (r"-i", r"By Euler, $\boxed{e^{i\pi/2}}$.", "wrong"),
]

PLAIN = [  # plain forms of the same value
    (r"\frac{7}{4}", r"So the slope is $\boxed{7/4}$.", "ok"),
    (r"\frac{7}{4}", r"So the slope is $\boxed{4/7}$.", "wrong"),
    (r"2500", r"The total is 2 500.", "ok"),
    (r"2500", r"Altogether $\boxed{2 500}$ people.", "ok"),
    (r"B", r"Checking each option, the correct option is (B).", "ok"),
    (r"B", r"Checking each option, the correct option is (C).", "wrong"),
    (r"\emptyset", r"No real number works, so the set is $\boxed{\varnothing}$.", "ok"),
    (r"\emptyset", r"So the set is $\boxed{\{0\}}$.", "wrong"),
]

TABLES = {
    "exact": EXACT,
    "signs": SIGNS,
    "roots": ROOTS,
    "sequences": SEQUENCES,
    "multipart": MULTIPART,
    "intervals": INTERVALS,
    "equations": EQUATIONS,
    "complex": COMPLEX,
    "plain": PLAIN,
}
ROWS = [
    pytest.param(*row, id=f"{name}-{i}")
    for name, table in TABLES.items()
    for i, row in enumerate(table)
]


@pytest.mark.parametrize("gold,completion,expected", ROWS)
def test_rule(gold, completion, expected):
    _check(gold, completion, expected)


def test_a_long_answer_after_the_answer_is_is_read_whole():
    """Issue 14: "the answer is ..." stopped reading at 350 characters."""
    terms = ", ".join(str(k * k) for k in range(1, 120))  # the perfect squares below 120^2
    assert len(terms) > 400
    _check(terms, f"Listing them all, the answer is {terms}", "ok")
    _check(terms, f"Listing them all, the answer is {terms}, 14400", "wrong")


def test_hard_labelled_set_no_false_positive_and_high_agreement():
    """The labelled set of BENCHMARKS.md's precision/recall report (the classes above, in five
    model endings, plus prose answers): no wrong answer passes, and at least 98% agree."""
    import json
    from pathlib import Path

    path = Path(__file__).parent / "data" / "math_hard_labelled.jsonl"
    rows = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    assert len(rows) >= 150 and 0.3 < sum(r["label"] for r in rows) / len(rows) < 0.7
    passed = [math(r["completion"], answer=r["answer"]).passed for r in rows]
    false_positives = [r for r, p in zip(rows, passed) if p and not r["label"]]
    assert false_positives == []
    agree = sum(p == r["label"] for r, p in zip(rows, passed))
    assert agree >= 0.98 * len(rows), [r for r, p in zip(rows, passed) if p != r["label"]]
