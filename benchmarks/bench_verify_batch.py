"""verify_batch vs concurrent.futures.ProcessPoolExecutor.map, same items, one process.

The anchor is what a user would write by hand: a process pool mapping the verifier over the items
(no per-item timeout, a hang stalls it forever, a crash breaks the whole pool). verify_batch adds
per-item hard timeouts and crash isolation; this measures what that costs in throughput. Rows:
``exact`` (declared ``inline_safe``: runs in the caller while it measures fast), ``json_schema``
and ``math`` on GSM8K-style completions (both chunked through the worker pool).

    .venv/bin/python benchmarks/bench_verify_batch.py [--items 2000] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor

from passband.verifiers import get, verify_batch

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
}


def _items(n: int):
    exact = [(f"{i % 97}", {"answer": str(i % 89)}) for i in range(n)]
    schema = [
        (
            f'Result:\n```json\n{{"name": "n{i}", "age": {i if i % 3 else json.dumps(str(i))}}}\n```',
            {"schema": SCHEMA},
        )
        for i in range(n)
    ]
    math = [
        (
            f"So she has {i % 7} + {i % 90} = {i % 97} apples.\nThe answer is {i % 97}.",
            {"answer": f"#### {i % 89}"},
        )
        for i in range(n)
    ]
    return {"exact": exact, "json_schema": schema, "math": math}


def _call(args):
    name, completion, reference = args
    return get(name)(completion, **reference)


def _anchor(pool, name, items):
    return list(
        pool.map(_call, [(name, c, r) for c, r in items], chunksize=max(1, len(items) // 32))
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print(
        f"{'verifier':<12}{'items':>7}{'anchor/s':>10}{'passband/s':>12}{'ratio':>7}  same verdicts"
    )
    with ProcessPoolExecutor(args.workers) as pool:
        list(pool.map(_call, [("exact", "1", {"answer": "1"})] * args.workers))  # warm both pools
        verify_batch("exact", ["1"] * args.workers, {"answer": "1"}, workers=args.workers)
        for name, items in _items(args.items).items():
            start = time.perf_counter()
            expected = _anchor(pool, name, items)
            anchor_s = time.perf_counter() - start
            start = time.perf_counter()
            got = verify_batch(
                name, [c for c, _ in items], [r for _, r in items], workers=args.workers
            )
            ours_s = time.perf_counter() - start
            same = [(v.status, v.score) for v in got] == [(v.status, v.score) for v in expected]
            n = len(items)
            print(
                f"{name:<12}{n:>7}{n / anchor_s:>10.0f}{n / ours_s:>12.0f}{anchor_s / ours_s:>7.2f}  {same}"
            )


if __name__ == "__main__":
    main()
