"""A run's input and output through the worker: stdin of any size, output up to its cap byte for
byte, and nothing of one run left in the worker for the next (its output is moved from pipes into
memfds and on to the harness in the kernel; the child reads its own job)."""

from __future__ import annotations

import os

import pytest

from passband.sandbox import Limits, Pool

FAST = Limits(timeout_s=10.0)


@pytest.fixture(scope="module")
def pool():
    with Pool(1) as p:
        yield p


def test_large_stdin_reaches_the_program_whole(pool):
    text = "".join(f"{i}\n" for i in range(60_000))  # 349 kB: past a pipe's buffer
    r = pool.run("import sys\nd = sys.stdin.read()\nprint(len(d), d.count('\\n'))", stdin=text)
    assert r.ok, r.stderr
    assert r.stdout == f"{len(text)} 60000\n"


def test_output_exactly_at_the_cap_is_whole_and_one_byte_more_is_truncated(pool):
    cap = Limits(timeout_s=10.0, max_output_bytes=5000)
    at = pool.run("import sys\nsys.stdout.write('a' * 5000)", limits=cap)
    assert at.stdout == "a" * 5000 and not at.stdout_truncated and at.ok
    over = pool.run("import sys\nsys.stdout.write('a' * 5001)", limits=cap)
    assert over.stdout == "a" * 5000 and over.stdout_truncated and not over.ok


def test_stderr_is_capped_on_its_own_and_stdout_kept(pool):
    code = (
        "import sys\nprint('fine', flush=True)\nsys.stderr.write('e' * 9000)\nsys.stderr.flush()\n"
    )
    r = pool.run(code, limits=Limits(timeout_s=10.0, max_output_bytes=4000))
    assert r.stdout == "fine\n" and not r.stdout_truncated
    assert r.stderr == "e" * 4000 and r.stderr_truncated


def test_a_run_that_floods_its_output_is_ended_at_the_cap_not_at_the_deadline(pool):
    r = pool.run(
        "import sys\nwhile True:\n    sys.stderr.write('x' * 1000)",
        limits=Limits(timeout_s=8.0, max_output_bytes=20_000),
    )
    assert r.stderr_truncated and not r.timed_out and r.duration_s < 4.0
    assert r.stderr == "x" * 20_000


def test_an_output_cap_above_max_file_mb_is_still_honoured(pool):
    """stdout is a pipe, which the file size limit does not cover, while a file the program
    writes is held to ``max_file_mb``."""
    limits = Limits(timeout_s=20.0, max_file_mb=1, max_output_bytes=3 << 20)
    r = pool.run("import sys\nsys.stdout.write('b' * (2 << 20))", limits=limits)
    assert r.ok, r.stderr[-500:]
    assert len(r.stdout) == 2 << 20 and not r.stdout_truncated
    big = pool.run("open('f', 'w').write('c' * (4 << 20))", limits=limits)
    assert big.exit_code != 0 and "File too large" in big.stderr
    small = pool.run("open('f', 'w').write('c' * (2 << 20))", limits=Limits(max_file_mb=1))
    assert small.exit_code != 0 and "File too large" in small.stderr


def test_bytes_that_are_not_utf8_come_back_replaced_not_lost(pool):
    r = pool.run("import os\nos.write(1, b'ok\\xff\\xfeend')", limits=FAST)
    assert r.stdout == "ok\ufffd\ufffdend"


def test_files_that_do_not_fit_the_disk_limit_are_a_setup_error_not_a_lost_worker(pool):
    if not pool.report.get("mount namespace", "").startswith("active"):
        pytest.skip("no private tmpfs here: disk_mb is not enforced")
    r = pool.run("print(1)", files={"big.txt": "x" * (20 << 20)}, limits=Limits(disk_mb=16))
    assert r.exit_code != 0 and not r.ok
    assert "No space left on device" in r.setup_error
    assert pool.run("print(2)").stdout == "2\n"  # the worker goes on


def test_writing_through_dev_stdout_keeps_what_was_written_before(pool):
    """stdout is a pipe, as programs expect: reopening /dev/stdout appends, it cannot truncate or
    rewind what the run wrote (a review found both with a file behind fd 1)."""
    code = (
        "import os\nprint('line1', flush=True)\nwith open('/dev/stdout', 'w') as f:\n"
        "    f.write('line2\\n')\nprint('line3')\n"
        "try:\n    os.posix_fallocate(1, 0, 64 << 20)\nexcept OSError:\n    print('no fallocate')\n"
    )
    r = pool.run(code, limits=FAST)
    assert r.stdout == "line1\nline2\nline3\nno fallocate\n", r


def test_a_stdin_too_big_for_the_disk_limit_leaves_nothing_behind(pool):
    if not pool.report.get("mount namespace", "").startswith("active"):
        pytest.skip("no private tmpfs here: disk_mb is not enforced")
    big = pool.run("print(len(input()))", stdin="S" * (8 << 20), limits=Limits(disk_mb=4))
    assert "No space left on device" in big.setup_error
    after = pool.run("print(len(input()))", stdin="T" * 100_000, limits=Limits(disk_mb=4))
    assert after.ok and after.stdout == "100000\n", after


def test_system_v_shared_memory_is_refused(pool):
    """A worker's runs share its IPC namespace: a segment left by one run would reach the next."""
    code = (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.shmget(0, 4096, 0o1666), ctypes.get_errno())\n"
    )
    r = pool.run(code, limits=FAST)
    assert r.stdout.split() == ["-1", "1"], r  # EPERM


def test_a_file_left_next_to_the_run_directory_is_gone_for_the_next_run(pool):
    """Landlock allows the worker's run directory (the parent of each run's), built once for all
    runs. As root the worker hands it to nobody (mode 711), so a run cannot write there at all;
    in a user namespace it can, and the worker empties all of it after each run."""
    tries = (
        "import os\nfor op in (lambda: open('../left-behind', 'w').write('SECRET'),"
        " lambda: os.mkdir('../d')):\n    try:\n        op()\n        print('wrote')\n"
        "    except OSError as e:\n        print('refused', e.errno)\n"
    )
    left = pool.run(tries, limits=FAST)
    assert left.exit_code == 0, left
    look = pool.run(
        "import os\nprint(os.path.exists('../left-behind'), os.path.exists('../d'))\n"
        "try:\n    print(sorted(os.listdir('..')) == [os.path.basename(os.getcwd())])\n"
        "except PermissionError:\n    print('unlisted')",
        limits=FAST,
    )
    assert look.stdout.split()[:2] == ["False", "False"], look
    assert look.stdout.split()[2] in ("True", "unlisted"), look


def test_what_a_run_does_to_the_run_directory_itself_does_not_reach_the_next_run(pool):
    """A review: a run owned the worker's run directory (its parent); 'chmod 0' on it broke every
    later run's absolute paths, and an extended attribute on it outlived the run. As root the
    worker now hands the directory to nobody; the worker resets its mode after each run."""
    mark = pool.run(
        "import os\ntry:\n    os.chmod('..', 0)\nexcept OSError as e:\n    print('no chmod')\n"
        "try:\n    os.setxattr('..', 'user.pb', b'SECRET')\n    print('stored')\n"
        "except OSError as e:\n    print('refused', e.errno)",
        limits=FAST,
    )
    assert mark.exit_code == 0 and "stored" not in mark.stdout, mark
    after = pool.run(
        "import os, tempfile\nprint(len(tempfile.mkdtemp()) > 0)\n"
        "try:\n    print(os.getxattr('..', 'user.pb'))\nexcept OSError:\n    print('none')",
        limits=FAST,
    )
    assert after.stdout.split() == ["True", "none"], after


@pytest.mark.parametrize("field", ["memory_mb", "max_processes", "disk_mb", "max_output_bytes"])
def test_a_count_given_as_a_float_is_refused_by_name(field):
    with pytest.raises(ValueError, match=f"Limits.{field} must be an integer"):
        Limits(**{field: 64.0})


def test_a_run_cannot_change_a_host_file_its_uid_owns(pool, tmp_path):
    """A review: landlock covers neither chmod nor utime, and the run's uid (root, or the user in
    a user namespace) owns most host files; a run made a root-owned file setuid."""
    if not pool.report.get("mount namespace", "").startswith("active"):
        pytest.skip("no private mount namespace here")
    assert pool.report["read-only host files"].startswith("active")
    target = tmp_path / "owned"
    target.write_text("x")
    target.chmod(0o600)
    before = target.stat()
    code = (
        "import os\nfor op in (lambda p: os.chmod(p, 0o4777), lambda p: os.utime(p, (0, 0))):\n"
        "    try:\n        op(PATH)\n        print('changed')\n"
        "    except OSError as e:\n        print('refused', e.errno)\n"
        "open('mine', 'w').write('1')\nos.chmod('mine', 0o755)\nprint('own file ok')\n"
    ).replace("PATH", repr(str(target)))
    r = pool.run(code, limits=FAST)
    assert r.stdout.split("\n")[:3] == ["refused 30", "refused 30", "own file ok"], r
    after = target.stat()
    assert (after.st_mode, after.st_mtime) == (before.st_mode, before.st_mtime)


def test_modules_the_worker_leaves_cold_still_work_in_a_run(pool):
    """random, tempfile, statistics and subprocess are not imported in the worker (their fork
    hooks cost every run): a run imports them itself, gets its own random seed, and tempfile
    writes in the run's directory."""
    code = (
        "import os, random, statistics, subprocess, tempfile\n"
        "print(random.random())\n"
        "print(os.path.dirname(tempfile.mkstemp()[1]) == os.getcwd())\n"
        "print(statistics.mean([1, 2, 3]))\n"
    )
    first, second = (pool.run(code, limits=FAST) for _ in range(2))
    assert first.ok and second.ok, (first, second)
    assert first.stdout.split()[1:] == ["True", "2"]
    assert first.stdout.split()[0] != second.stdout.split()[0]  # seeded per run


def test_a_run_cannot_change_the_hosts_cgroup_files(pool):
    """A review: the cgroup mounts stayed writable for the worker's own limits, so a run (uid 0,
    which owns every cgroup file) could chmod any cgroup of the host. Only the worker's own
    cgroups are bind-mounted writable now, and as root they belong to nobody."""
    if not pool.report.get("cgroup pids", "").startswith("active"):
        pytest.skip("no pids cgroup here")
    target = "/sys/fs/cgroup/pids/cgroup.procs"
    if not os.path.exists(target):
        pytest.skip(f"{target} is not on this machine")
    mode = os.stat(target).st_mode & 0o7777
    code = (
        f"import os\ntry:\n    os.chmod({target!r}, {mode})\n    print('changed')\n"
        "except OSError as e:\n    print('refused', e.errno)"
    )
    r = pool.run(code, limits=FAST)
    assert r.stdout.strip() == "refused 30", r  # EROFS
