"""Compile once, run many times: the compiler under its own limits, the binary under the program's."""

from __future__ import annotations

import shutil

import pytest

from passband.sandbox import COMPILE_LIMITS, Language, Limits, Pool, compile_once

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

ADD = "#include <bits/stdc++.h>\nusing namespace std;\nint main(){long a,b;cin>>a>>b;cout<<a+b<<endl;}"


@pytest.fixture(scope="module")
def pool():
    with Pool(1) as p:
        yield p


def test_a_program_compiled_once_runs_on_each_input_under_the_programs_limits(pool):
    build = compile_once(ADD, "cpp", pool=pool)
    assert build.ok and build.binary.startswith(b"\x7fELF"), build.result.stderr
    small = Limits(timeout_s=5, memory_mb=64)  # g++ itself needs ~200 MB for bits/stdc++.h
    for a, b in [(40, 2), (-7, 7), (10**12, 1)]:
        r = build.run(stdin=f"{a} {b}\n", limits=small, pool=pool)
        assert (r.exit_code, r.stdout) == (0, f"{a + b}\n")
    # compiled inside the run, the compiler gets the program's 64 MB and fails
    assert pool.run(ADD, stdin="1 2", language="cpp", limits=small).exit_code != 0


def test_the_binary_is_still_bounded_by_the_programs_memory_and_time(pool):
    hog = "#include <vector>\nint main(){std::vector<char> v(300<<20,1);return v[7]-1;}"
    build = compile_once(hog, "cpp", pool=pool)
    assert build.ok
    assert build.run(limits=Limits(timeout_s=5, memory_mb=64), pool=pool).exit_code != 0
    assert build.run(limits=Limits(timeout_s=5, memory_mb=512), pool=pool).exit_code == 0
    spin = compile_once("int main(){volatile long x=0;for(;;)x++;}", "cpp", pool=pool)
    assert spin.run(limits=Limits(timeout_s=0.5), pool=pool).timed_out


def test_a_compile_error_is_a_failed_build_with_the_compilers_message(pool):
    build = compile_once("int main(){ return x; }", "cpp", pool=pool)
    assert not build.ok and build.result.exit_code != 0
    assert "'x' was not declared" in build.result.stderr.replace("‘", "'").replace("’", "'")
    with pytest.raises(ValueError, match="the compile failed"):
        build.run(pool=pool)


def test_the_compile_is_sandboxed_and_bounded(pool):
    secret = compile_once('#include "/etc/passwd"\nint main(){}', "cpp", pool=pool)
    assert not secret.ok and "root:" not in secret.result.stderr
    slow = compile_once(ADD, "cpp", pool=pool, limits=Limits(timeout_s=0.05))
    assert not slow.ok and slow.result.timed_out
    assert COMPILE_LIMITS.memory_mb >= 1024 and COMPILE_LIMITS.timeout_s >= 10


def test_languages_without_an_artifact_are_refused_and_artifacts_are_checked():
    with pytest.raises(ValueError, match="names no artifact"):
        compile_once("print(1)", "python")
    with pytest.raises(ValueError, match="artifact is a plain file its compile makes"):
        Language("x", "x.c", None, ("./x",), artifact="x")
    with pytest.raises(ValueError, match="artifact is a plain file"):
        Language("x", "x.c", ("cc", "x.c"), ("./x",), artifact="bin/x")


def test_files_are_text_or_bytes_and_bytes_are_executable(pool):
    script = b"#!/bin/sh\necho from-bytes\n"
    lang = Language("sh", "main.sh", None, ("./tool",))
    r = pool.run("", language=lang, files={"tool": script}, limits=Limits(timeout_s=5))
    assert (r.exit_code, r.stdout) == (0, "from-bytes\n"), r.stderr
    with pytest.raises(TypeError, match="file 'tool' must be str or bytes, got int"):
        pool.run("", language=lang, files={"tool": 3})
