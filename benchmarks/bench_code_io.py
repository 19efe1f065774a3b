"""The ``code`` verifier on C++ ``io`` rows: compile once per completion against compiling per case.

The anchor is the sandbox run a harness without ``compile_once`` makes for each case
(``pool.run(source, language="cpp")``: the compiler inside every case's run, under its limits);
passband is the ``code`` verifier as a user calls it, at its defaults (``memory_mb = 512``,
``timeout_s = 10``), the whole call timed. One process, the two alternating over ``--rounds``;
verdicts must agree with the expected ones (a right and a wrong program).

    .venv/bin/python benchmarks/bench_code_io.py [--cases 10] [--rounds 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time

RIGHT = (
    "#include <bits/stdc++.h>\nusing namespace std;\n"
    "int main(){long a,b;cin>>a>>b;cout<<a+b<<endl;}"
)
WRONG = RIGHT.replace("a+b", "a*b")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("g++") is None:
        print("g++ not installed: nothing to measure")
        return 0
    from passband.sandbox import default_pool
    from passband.verifiers import get

    code, pool = get("code"), default_pool()
    cases = [{"stdin": f"{i} {i + 2}\n", "stdout": f"{2 * i + 2}\n"} for i in range(args.cases)]

    def per_case(src: str) -> bool:  # the anchor: compile inside each case's run
        return all(
            pool.run(src, stdin=c["stdin"], language="cpp").stdout == c["stdout"] for c in cases
        )

    def passband(src: str) -> bool:
        return code(f"```cpp\n{src}\n```", io=cases, language="cpp").passed

    per_case(RIGHT), passband(RIGHT)  # warm the pool and the compiler's files
    times: dict[str, list[float]] = {"compile per case": [], "passband code": []}
    for _ in range(args.rounds):
        for name, fn in (("compile per case", per_case), ("passband code", passband)):
            start = time.perf_counter()
            assert fn(RIGHT) and not fn(WRONG), name  # right passes, wrong fails, in both
            times[name].append((time.perf_counter() - start) / 2)
    base = times["compile per case"]
    print(
        f"C++ io, {args.cases} cases, one right and one wrong program a round, {args.rounds} rounds"
    )
    print("| contender | s per completion (range) | speed-up vs compile per case (range) |")
    print("|---|---|---|")
    for name, ts in times.items():
        ratios = [b / t for b, t in zip(base, ts)]
        print(
            f"| {name} | {min(ts):.2f}–{max(ts):.2f} (median {statistics.median(ts):.2f}) | "
            f"{min(ratios):.1f}–{max(ratios):.1f}× |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
