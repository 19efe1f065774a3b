"""Adversarial tests of the hard deadline: each checks one property with a real worker process.

The functions sent to workers are stdlib ones (time.sleep, os._exit, ctypes.string_at ...) because
test modules are not importable by name inside a worker process.
"""

import ctypes
import functools
import os
import sys
import textwrap
import threading
import time
import types

import pytest

from passband.verifiers._deadline import (
    DeadlineExceeded,
    NotPortable,
    WorkerCrashed,
    call_with_deadline,
    in_worker,
    warm_up,
)

SLACK_S = 1.5  # kill + reap + scheduling on a loaded 2-core machine


@pytest.fixture(scope="module", autouse=True)
def _warm():
    warm_up(1)


def test_returns_result_from_another_process():
    pid = call_with_deadline(os.getpid, timeout=10)
    assert pid != os.getpid()
    assert call_with_deadline(int, "42", timeout=10) == 42
    assert call_with_deadline(divmod, 7, 2, timeout=10) == (3, 1)


def test_hanging_call_is_killed_within_deadline():
    start = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="deadline"):
        call_with_deadline(time.sleep, 60, timeout=0.5)
    elapsed = time.monotonic() - start
    assert 0.45 <= elapsed < 0.5 + SLACK_S
    assert isinstance(DeadlineExceeded("x"), TimeoutError)


def test_worker_is_replaced_after_a_timeout():
    from passband.verifiers import _deadline

    pool = _deadline._pool()
    size = len(pool._all)
    with pytest.raises(DeadlineExceeded):
        call_with_deadline(time.sleep, 60, timeout=0.3)
    for _ in range(100):  # the replacement starts in the background
        if len(pool._all) >= size:
            break
        time.sleep(0.05)
    assert len(pool._all) >= size
    assert all(w.alive for w in pool._idle)
    assert call_with_deadline(os.getpid, timeout=10) != os.getpid()


def test_os_exit_is_an_error_not_a_hang():
    start = time.monotonic()
    with pytest.raises(WorkerCrashed, match="exit code 7"):
        call_with_deadline(os._exit, 7, timeout=10)
    assert time.monotonic() - start < 5
    assert call_with_deadline(int, "1", timeout=10) == 1  # pool still serves


def test_segfault_is_an_error_not_a_hang():
    with pytest.raises(WorkerCrashed, match="-11"):
        call_with_deadline(ctypes.string_at, 0, timeout=10)
    assert call_with_deadline(int, "2", timeout=10) == 2


def test_exception_in_function_is_reraised_with_remote_traceback():
    with pytest.raises(ValueError, match="invalid literal") as info:
        call_with_deadline(int, "not a number", timeout=10)
    assert any("passband worker" in note for note in getattr(info.value, "__notes__", []))


def test_unpicklable_function_raises_not_portable():
    with pytest.raises(NotPortable, match="importable module"):
        call_with_deadline(lambda: 1, timeout=10)


def test_function_the_worker_cannot_import_raises_not_portable(monkeypatch):
    # a module that exists only in this process, like a function defined in a notebook
    module = types.ModuleType("passband_only_in_parent")
    exec("def helper():\n    return 1\n", module.__dict__)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    with pytest.raises(NotPortable, match="could not load"):
        call_with_deadline(module.helper, timeout=10)
    assert call_with_deadline(int, "3", timeout=10) == 3


def test_concurrent_calls_from_threads_run_in_parallel_and_isolated():
    results, errors = {}, {}

    def call(i):
        try:
            if i == 0:
                call_with_deadline(time.sleep, 60, timeout=1.0)
            else:
                results[i] = call_with_deadline(functools.partial(pow, i), 2, timeout=10)
        except Exception as exc:  # collected and asserted below
            errors[i] = exc

    threads = [threading.Thread(target=call, args=(i,)) for i in range(6)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert time.monotonic() - start < 1.0 + 2 * SLACK_S + 3  # includes starting extra workers
    assert results == {i: i * i for i in range(1, 6)}
    assert list(errors) == [0] and isinstance(errors[0], DeadlineExceeded)


def test_concurrent_sleeps_overlap():
    warm_up(3)
    threads = [
        threading.Thread(target=call_with_deadline, args=(time.sleep, 0.6), kwargs={"timeout": 10})
        for _ in range(3)
    ]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert time.monotonic() - start < 1.6  # serial would take 1.8 s


def test_nested_calls_run_inline_inside_a_worker():
    assert not in_worker()
    assert call_with_deadline(in_worker, timeout=10) is True
    inner = functools.partial(call_with_deadline, os.getpid, timeout=1)
    worker_pid = call_with_deadline(inner, timeout=10)
    assert worker_pid != os.getpid()


@pytest.mark.parametrize("bad", [0, -1, "3", None])
def test_timeout_must_be_positive_number(bad):
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        call_with_deadline(os.getpid, timeout=bad)


@pytest.mark.slow  # ~15 s on a loaded 2-core machine: a fresh interpreter, pool and forkservers
def test_usable_inside_a_process_pool_worker_that_then_exits():
    # A user's ProcessPoolExecutor worker that verifies: its exit must not wait on our workers.
    import subprocess

    code = textwrap.dedent(
        """
        import os, concurrent.futures as cf
        from passband.verifiers._deadline import call_with_deadline

        with cf.ProcessPoolExecutor(2) as pool:
            futures = [pool.submit(call_with_deadline, os.getpid, timeout=10) for _ in range(4)]
            print(len([f.result() for f in futures]))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=90)
    assert done.returncode == 0 and done.stdout.strip() == "4", done.stderr
