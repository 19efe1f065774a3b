"""Write the small datasets of the SmolLM2-135M-Instruct examples (chat-message prompts).

    python examples/smollm2/make_data.py        # -> runs/smollm2/{gsm8k,json_extract,code}.jsonl

- ``gsm8k.jsonl``: the ``--gsm8k`` easiest rows of ``../shared/data/gsm8k/train.jsonl`` (fields
  ``prompt`` as chat messages, ``answer`` as GSM8K writes it: "... #### 72"). Easiest means the
  fewest solution lines before ``####`` (GSM8K writes one calculation per line; the minimum is
  2), then the shortest question, then file order: a 135M model solves almost none of the first
  rows of the file, so a slice taken in file order is all ``too_hard`` and teaches nothing.
- ``json_extract.jsonl``: extract a person's name and age as JSON; the row's ``schema`` pins the
  right values with ``const``, so the ``json_schema`` verifier rewards only the right extraction.
- ``code.jsonl``: one-line Python functions, MBPP-style ``tests`` run in the sandbox by ``code``.
Prompts are chat messages, so trainer and scorer apply the model's chat template.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

GSM8K_SUFFIX = " Give the final answer as a number after ####."
NAMES = ["Maria", "John", "Aiko", "Omar", "Lena", "Carlos", "Priya", "Tom", "Sofia", "Ivan"]
FUNCTIONS = [  # (name, description, tests)
    ("add", "returns the sum of a and b", ["assert add(2, 3) == 5", "assert add(-1, 1) == 0"]),
    ("double", "returns x times two", ["assert double(4) == 8", "assert double(0) == 0"]),
    (
        "is_even",
        "returns True when n is even",
        ["assert is_even(4) is True", "assert is_even(7) is False"],
    ),
    ("square", "returns x squared", ["assert square(3) == 9", "assert square(-2) == 4"]),
    ("first", "returns the first item of the list xs", ["assert first([5, 6]) == 5"]),
    ("last", "returns the last item of the list xs", ["assert last([5, 6]) == 6"]),
    ("negate", "returns -x", ["assert negate(3) == -3", "assert negate(-2) == 2"]),
    (
        "maximum",
        "returns the larger of a and b",
        ["assert maximum(2, 9) == 9", "assert maximum(4, 1) == 4"],
    ),
]


def chat(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def solution_steps(answer: str) -> int:
    """Lines of a GSM8K solution before ``####``: one calculation each."""
    return len(answer.split("####")[0].strip().splitlines())


def gsm8k_rows(source: Path, n: int) -> list[dict]:
    with open(source, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    # sorted() is stable: ties in (steps, question length) keep the file's order
    easiest = sorted(rows, key=lambda r: (solution_steps(r["answer"]), len(r["question"])))[:n]
    return [{"prompt": chat(r["question"] + GSM8K_SUFFIX), "answer": r["answer"]} for r in easiest]


def json_rows(n: int, seed: int = 0) -> list[dict]:
    rng, rows = random.Random(seed), []
    for i in range(n):
        name, age = NAMES[i % len(NAMES)], rng.randint(18, 80)
        schema = {
            "type": "object",
            "required": ["name", "age"],
            "properties": {"name": {"const": name}, "age": {"const": age}},
        }
        text = f"{name} is {age} years old and lives in a small town."
        rows.append(
            {
                "prompt": chat(
                    f"Extract the name and age from this sentence as JSON with "
                    f'keys "name" and "age": {text}'
                ),
                "schema": schema,
            }
        )
    return rows


def code_rows() -> list[dict]:
    return [
        {
            "prompt": chat(
                f"Write a Python function {name} that {what}. Reply with only the code."
            ),
            "tests": tests,
        }
        for name, what, tests in FUNCTIONS
    ]


def write(rows: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {len(rows)} rows to {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gsm8k-source", type=Path, default=Path("../shared/data/gsm8k/train.jsonl"))
    ap.add_argument("--gsm8k", type=int, default=12, help="easiest GSM8K rows to take (default 12)")
    ap.add_argument("--out", type=Path, default=Path("runs/smollm2"))
    args = ap.parse_args()
    write(gsm8k_rows(args.gsm8k_source, args.gsm8k), args.out / "gsm8k.jsonl")
    write(json_rows(8), args.out / "json_extract.jsonl")
    write(code_rows(), args.out / "code.jsonl")


if __name__ == "__main__":
    main()
