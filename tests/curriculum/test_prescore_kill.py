"""Kill a real pre-scoring process (SIGKILL, no cleanup) twice, rerun it, compare outputs."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from passband.curriculum import prescore, read_rows, write_rows
from passband.curriculum.simulate import CoinFlipGenerator

_CHILD = r"""
import json, sys
from passband.curriculum import prescore, read_rows
from passband.curriculum.simulate import CoinFlipGenerator

src, out, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
rows = read_rows(src)
table = {r["prompt"]: (r["true_rate"], r["answer"]) for r in rows}
prescore(rows, CoinFlipGenerator(table, delay=delay), "exact", out_path=out, progress=False,
         batch_size=3, references={"answer": "answer"}, settings={"model": "coin"})
"""


def _start(script, src, out, delay):
    # Own session: the kill below reaches the verifier workers it started, and nothing else.
    return subprocess.Popen(
        [sys.executable, str(script), str(src), str(out), str(delay)],
        start_new_session=True,
        stderr=subprocess.PIPE,
    )


def _kill_when(proc, journal, min_lines, deadline_s=60.0):
    start = time.monotonic()
    while time.monotonic() - start < deadline_s:
        if journal.exists() and journal.read_text().count("\n") >= min_lines:
            break
        if proc.poll() is not None:
            pytest.fail(f"child ended before it could be killed: {proc.stderr.read().decode()}")
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stderr.close()


@pytest.mark.slow
def test_killed_twice_then_rerun_matches_uninterrupted(tmp_path):
    rows = [
        {"prompt": f"p{i}", "answer": str(i), "true_rate": (i * 37 % 11) / 10} for i in range(45)
    ]
    rows = [dict(r, true_rate=min(r["true_rate"], 1.0)) for r in rows]
    src = tmp_path / "in.jsonl"
    write_rows(rows, src)
    script = tmp_path / "child.py"
    script.write_text(_CHILD)

    ref_out = tmp_path / "ref.parquet"  # the uninterrupted run, in this process
    table = {r["prompt"]: (r["true_rate"], r["answer"]) for r in rows}
    prescore(
        read_rows(src),
        CoinFlipGenerator(table),
        "exact",
        out_path=ref_out,
        progress=False,
        batch_size=3,
        references={"answer": "answer"},
        settings={"model": "coin"},
    )

    out = tmp_path / "out.parquet"
    journal = tmp_path / "out.parquet.journal.jsonl"
    _kill_when(_start(script, src, out, 0.05), journal, min_lines=7)
    first_cut = journal.read_text().count("\n") - 1
    _kill_when(_start(script, src, out, 0.05), journal, min_lines=first_cut + 10)
    assert not out.exists()
    lines = [json.loads(x) for x in journal.read_text().splitlines()[1:] if x.endswith("}")]
    assert 0 < len(lines) < 45

    last = _start(script, src, out, 0.0)
    assert last.wait(timeout=120) == 0, last.stderr.read().decode()
    last.stderr.close()
    got = read_rows(out)
    assert got == read_rows(ref_out)
    assert [r["prompt"] for r in got] == [r["prompt"] for r in rows]  # none lost or duplicated
    assert not journal.exists()
