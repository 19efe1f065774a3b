"""Sandbox throughput: the warm pool against one ``subprocess.run([python, file])`` per test.

The naive runner is what human-eval-style harnesses do today: write the program (solution plus
tests) to a file and start a fresh interpreter on it, trusting the exit code. The pool runs the same
programs with every isolation mechanism that is active on this machine (see ``passband sandbox
doctor``). Both sides use the same number of concurrent runs (default: the core count), in one
process, on the same programs; the result is reported as runs/s and as ratios.

    .venv/bin/python benchmarks/bench_sandbox.py            # about 30-60 s on 2 busy cores
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from passband.sandbox import Limits, Pool

TRIVIAL = "x = 1\n"

PROMPT = '''from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    """Check if in given list of numbers, are any two numbers closer to each other than threshold."""
'''
SOLUTION = """    for idx, elem in enumerate(numbers):
        for idx2, elem2 in enumerate(numbers):
            if idx != idx2:
                distance = abs(elem - elem2)
                if distance < threshold:
                    return True
    return False
"""
TEST = """

METADATA = {'author': 'jt', 'dataset': 'test'}


def check(candidate):
    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True
    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False
    assert candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.95) == True
    assert candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.8) == False
    assert candidate([1.0, 2.0, 3.0, 4.0, 5.0, 2.0], 0.1) == True
    assert candidate([1.1, 2.2, 3.1, 4.1, 5.1], 1.0) == True
    assert candidate([1.1, 2.2, 3.1, 4.1, 5.1], 0.5) == False
"""
HUMANEVAL = PROMPT + SOLUTION + TEST + "\ncheck(has_close_elements)\n"


def naive(program: str, n: int, workers: int, flags: tuple[str, ...] = ()) -> float:
    """runs/s of a fresh interpreter per run (file written per run, as human-eval does)."""
    with tempfile.TemporaryDirectory(prefix="bench-naive-") as tmp:

        def one(i: int) -> int:
            path = os.path.join(tmp, f"prog_{i}.py")
            with open(path, "w") as fh:
                fh.write(program)
            done = subprocess.run([sys.executable, *flags, path], capture_output=True, timeout=30)
            os.unlink(path)
            return done.returncode

        return _rate(one, n, workers)


def pooled(pool: Pool, program: str, n: int, workers: int) -> float:
    limits = Limits(timeout_s=10.0)
    return _rate(lambda i: pool.run(program, limits=limits).exit_code, n, workers)


def verifier(n: int, workers: int) -> float:
    from passband.verifiers import get

    code = get("code")
    completion = f"```python\n{PROMPT + SOLUTION}```"
    return _rate(
        lambda i: 0 if code(completion, test=TEST, entry_point="has_close_elements").passed else 1,
        n,
        workers,
    )


def _rate(fn, n: int, workers: int) -> float:
    with ThreadPoolExecutor(workers) as ex:
        list(ex.map(fn, range(min(n, 2 * workers))))  # warm-up (pool workers start lazily)
        start = time.perf_counter()
        codes = list(ex.map(fn, range(n)))
        elapsed = time.perf_counter() - start
    if any(codes):
        raise SystemExit(f"benchmark program failed: exit codes {sorted(set(codes))}")
    return n / elapsed


def _interleaved(measures: dict, rounds: int) -> dict:
    """Median rate per side over rounds that alternate the sides, so a load spike from other
    processes on a shared machine hits both sides alike instead of skewing one."""
    rates = {name: [] for name in measures}
    for _ in range(rounds):
        for name, measure in measures.items():
            rates[name].append(measure())
    return {name: statistics.median(r) for name, r in rates.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count(), help="concurrent runs on both sides"
    )
    parser.add_argument(
        "--naive-runs", type=int, default=20, help="runs per round for each naive runner"
    )
    parser.add_argument("--pool-runs", type=int, default=150, help="runs per round for the pool")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    w, rows = args.workers, []
    with Pool(w) as pool:
        for label, program in (
            ("trivial program", TRIVIAL),
            ("HumanEval-style test (HumanEval/0)", HUMANEVAL),
        ):
            measures = {
                "naive": lambda p=program: naive(p, args.naive_runs, w),
                "naive -I -S": lambda p=program: naive(p, args.naive_runs, w, ("-I", "-S")),
                "pool": lambda p=program: pooled(pool, p, args.pool_runs, w),
            }
            if program is HUMANEVAL:
                measures["verifier"] = lambda: verifier(args.pool_runs // 2, w)
            rows.append((label, _interleaved(measures, args.rounds)))
    print(
        f"workers={w}  cores={os.cpu_count()}  python={sys.version.split()[0]}  rounds={args.rounds} (medians)"
    )
    print(
        f"{'workload':44s} {'naive/s':>8s} {'-I -S/s':>8s} {'pool/s':>8s} {'vs naive':>9s} {'vs -I -S':>9s}"
    )
    for label, r in rows:
        print(
            f"{label:44s} {r['naive']:8.1f} {r['naive -I -S']:8.1f} {r['pool']:8.1f} "
            f"{r['pool'] / r['naive']:8.1f}x {r['pool'] / r['naive -I -S']:8.1f}x"
        )
    r = rows[1][1]
    print(
        f"{'code verifier, harness-side asserts (same)':44s} {r['naive']:8.1f} {r['naive -I -S']:8.1f} "
        f"{r['verifier']:8.1f} {r['verifier'] / r['naive']:8.1f}x {r['verifier'] / r['naive -I -S']:8.1f}x"
    )


if __name__ == "__main__":
    main()
