"""verify_batch against hostile items: hangs, crashes, exceptions, threads, unpicklable callables.

The builtin ``eval`` is the verifier here: the completion is Python code, so one batch can mix a
normal item, an infinite sleep, ``os._exit`` and a segfault, and ``eval`` is importable in a worker.
"""

import os
import threading
import time
import warnings

import pytest

from passband.verifiers import Verdict, verify_batch

HANG = "__import__('time').sleep(60)"
EXIT = "__import__('os')._exit(3)"
SEGV = "__import__('ctypes').string_at(0)"


def test_results_in_input_order():
    completions = [f"{i} + 1" for i in range(40)]
    verdicts = verify_batch(eval, completions, timeout=10, workers=2)
    assert [v.score for v in verdicts] == [i + 1.0 for i in range(40)]


def test_hang_and_crashes_cost_only_their_own_item():
    completions = ["1", HANG, "2", EXIT, "3", SEGV, "1/0", "4"]
    start = time.monotonic()
    verdicts = verify_batch(eval, completions, timeout=1.0, workers=2)
    elapsed = time.monotonic() - start
    statuses = [v.status for v in verdicts]
    assert statuses == ["ok", "timeout", "ok", "error", "ok", "error", "error", "ok"]
    assert [verdicts[i].score for i in (0, 2, 4, 7)] == [1.0, 2.0, 3.0, 4.0]
    assert "ZeroDivisionError" in verdicts[6].detail
    assert "-11" in verdicts[5].detail and "exit code 3" in verdicts[3].detail
    assert elapsed < 10


def test_pool_is_persistent_across_calls():
    first = {v.score for v in verify_batch(eval, ["__import__('os').getpid()"] * 8, workers=2)}
    second = {v.score for v in verify_batch(eval, ["__import__('os').getpid()"] * 8, workers=2)}
    assert os.getpid() not in first
    assert first & second  # at least one worker served both calls


def test_callable_from_many_threads_at_once():
    out = {}

    def work(k):
        out[k] = [
            v.score for v in verify_batch(eval, [f"{k} * 10 + {i}" for i in range(5)], timeout=10)
        ]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert out == {k: [k * 10.0 + i for i in range(5)] for k in range(4)}


def test_one_reference_dict_is_shared_and_lists_must_match():
    verdicts = verify_batch("exact", ["42", "41"], {"answer": "42"}, timeout=10)
    assert [v.status for v in verdicts] == ["ok", "wrong"]
    with pytest.raises(ValueError, match="2 completions but 1 references"):
        verify_batch("exact", ["42", "41"], [{"answer": "42"}])
    with pytest.raises(ValueError, match="timeout"):
        verify_batch("exact", ["42"], {"answer": "42"}, timeout=0)
    assert verify_batch("exact", [], {"answer": "1"}) == []


def test_unpicklable_callable_runs_inline_with_soft_timeout_warning():
    def slow_for_long_answers(completion):
        if len(completion) > 3:
            time.sleep(3)
        return Verdict.ok("short")

    start = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        verdicts = verify_batch(slow_for_long_answers, ["ab", "abcdef"], timeout=0.5)
    assert time.monotonic() - start < 2.5
    assert [v.status for v in verdicts] == ["ok", "timeout"]
    assert "soft" in verdicts[1].detail
    assert any("SOFT" in str(w.message) for w in caught)


def test_a_verifier_the_worker_cannot_import_is_named_in_the_warning(monkeypatch):
    """The warning named passband's internal wrapper ("could not load call_safely"), not the
    user's function."""
    import sys
    import types

    module = types.ModuleType("passband_only_here")  # like a function defined in a notebook
    exec("def grade(completion, **_):\n    return 1.0\n", module.__dict__)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    with pytest.warns(RuntimeWarning, match=r"could not load grade \(ModuleNotFoundError") as got:
        verdicts = verify_batch(module.grade, ["a"], timeout=5)
    assert verdicts[0].passed and "call_safely" not in str(got[0].message)


def test_unknown_verifier_name_lists_known_ones():
    with pytest.raises(KeyError, match="Known verifiers"):
        verify_batch("no_such_verifier", ["x"])


def test_module_on_a_folder_added_after_workers_started(tmp_path, monkeypatch):
    verify_batch(eval, ["1"], timeout=10)  # workers exist before the folder is on sys.path
    (tmp_path / "late_verifiers.py").write_text(
        "import os\nfrom passband.verifiers import Verdict\n\n"
        "def where(completion, **reference):\n    return Verdict.ok(str(os.getpid()))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import late_verifiers

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an inline fallback would warn
        verdicts = verify_batch(late_verifiers.where, ["a", "b"], timeout=10)
    assert all(v.passed and v.detail != str(os.getpid()) for v in verdicts)


# ---- cut-offs, chunked outcomes, the inline path --------------------------------------------------


def test_a_reward_that_always_hangs_costs_one_round_of_timeouts_not_the_whole_batch():
    """Issue 14: every item timing out made each step wait len(items) / workers timeouts."""
    start = time.monotonic()
    verdicts = verify_batch(eval, [HANG] * 40, timeout=0.5, workers=2)
    elapsed = time.monotonic() - start
    assert [v.status for v in verdicts] == ["timeout"] * 40
    assert sum("not run" in v.detail for v in verdicts) >= 30, [v.detail for v in verdicts]
    assert elapsed < 6, elapsed  # 40 * 0.5 / 2 = 10 s without the cut-off


def test_batch_timeout_bounds_the_whole_call():
    slow = "__import__('time').sleep(0.3) or 1"
    start = time.monotonic()
    verdicts = verify_batch(eval, [slow] * 24, timeout=5, workers=2, batch_timeout=1.0)
    elapsed = time.monotonic() - start
    assert elapsed < 3.0, elapsed  # 24 * 0.3 / 2 = 3.6 s without it
    done = [v for v in verdicts if v.status == "ok"]
    cut = [v for v in verdicts if v.status == "timeout"]
    assert done and cut and len(done) + len(cut) == 24
    assert any("batch_timeout" in v.detail for v in cut)


@pytest.mark.parametrize("bad", [0, -1, "1"])
def test_batch_timeout_is_validated(bad):
    with pytest.raises(ValueError, match="batch_timeout"):
        verify_batch(eval, ["1"], batch_timeout=bad)


def test_a_fast_item_reported_late_is_never_blamed_for_the_hang_after_it():
    """Outcomes come back in batches; a timeout must land on the hanging item, not the one before."""
    completions = ["1", "2", HANG, "3", "4", EXIT, "5"]
    verdicts = verify_batch(eval, completions, timeout=1.0, workers=1)
    assert [v.status for v in verdicts] == ["ok", "ok", "timeout", "ok", "ok", "error", "ok"]
    assert [verdicts[i].score for i in (0, 1, 3, 4, 6)] == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_exact_runs_inline_and_agrees_with_the_worker_path(monkeypatch):
    from passband.verifiers import _deadline, exact_match

    completions = [f"{i % 7}" for i in range(300)]
    refs = [{"answer": str(i % 5)} for i in range(300)]
    in_workers = verify_batch(
        exact_match(pattern=r"(\S+)"), completions, refs, workers=2
    )  # not inline_safe

    def no_workers():
        raise AssertionError("an inline_safe verifier measured fast must not need a worker")

    monkeypatch.setattr(_deadline, "_pool", no_workers)
    inline = verify_batch("exact", completions, refs, workers=2)
    assert [(v.status, v.score) for v in inline] == [(v.status, v.score) for v in in_workers]


def test_slow_completions_at_the_head_of_a_batch_do_not_mask_the_rest():
    """Stop 35 (a review of masked verdicts): six slow completions first made the batch stop
    early, and the six right answers after them came back as masked "not run" timeouts."""
    schema = {"type": "object", "properties": {"v": {"type": "string", "pattern": "^(a+)+$"}}}
    slow = ['{"v": "' + "a" * 40 + '!"}' + " " * 100] * 6  # catastrophic backtracking
    fast = ['{"v": "aaa"}'] * 6
    out = verify_batch("json_schema", slow + fast, [{"schema": schema}] * 12, timeout=1, workers=2)
    assert [v.status for v in out[6:]] == ["ok"] * 6, out


def test_the_inline_path_leaves_the_garbage_collector_as_it_found_it():
    """The inline path pauses the collector for its loop (a full collection set off by a large
    batch cost more than the batch); it must hand it back as it was, on or off."""
    import gc

    from passband.verifiers import verify_batch

    assert gc.isenabled()
    assert [v.status for v in verify_batch("exact", ["4", "5"], {"answer": "4"})] == ["ok", "wrong"]
    assert gc.isenabled()
    gc.disable()
    try:
        verify_batch("exact", ["4"], {"answer": "4"})
        assert not gc.isenabled()
    finally:
        gc.enable()
