"""``capsys`` / ``capfd`` in a test module: what the program printed in its sandbox (a real
sandbox session). Before, any test asking for them was ``error`` for every answer."""

from __future__ import annotations

import pytest

from passband.sandbox import Limits, default_pool
from passband.verifiers import get

CODE = get("code")
SUITE = """from solution import greet

def test_greet(capsys):
    greet("Bob")
    captured = capsys.readouterr()
    assert captured.out == "Hello, Bob!\\n"

def test_each_read_starts_afresh(capfd):
    greet("A")
    out, err = capfd.readouterr()
    assert out == "Hello, A!\\n" and err == ""
    greet("B")
    assert capfd.readouterr().out == "Hello, B!\\n"
"""
RIGHT = 'def greet(name):\n    print(f"Hello, {name}!")\n'


def _run(program: str, **ref):
    return CODE(f"```python\n{program}```", **ref)


def test_a_program_that_prints_the_right_text_passes():
    verdict = _run(RIGHT, test=SUITE)
    assert verdict.status == "ok" and "3/3 checks passed" in verdict.detail, verdict.detail


@pytest.mark.parametrize(
    "wrong",
    [
        'def greet(name):\n    print(f"Hello, {name}")\n',  # a character short
        'def greet(name):\n    return f"Hello, {name}!"\n',  # returns instead of printing
        'print("Hello, Bob!")\n\ndef greet(name):\n    pass\n',  # printed while loading only
        'import sys\n\ndef greet(name):\n    print(f"Hello, {name}!", file=sys.stderr)\n',
    ],
)
def test_a_program_that_prints_something_else_fails(wrong):
    verdict = _run(wrong, test=SUITE)
    assert verdict.status == "wrong", verdict.detail


def test_stderr_is_read_apart_and_partial_credit_counts_each_assert():
    noisy = (
        'import sys\n\ndef greet(name):\n    sys.stderr.write("!")\n    print(f"Hello, {name}!")\n'
    )
    verdict = _run(noisy, test=SUITE, partial_credit=True)
    assert verdict.status == "wrong" and verdict.score == pytest.approx(2 / 3), verdict.detail


def test_parametrized_tests_take_capsys_too():
    suite = (
        "import pytest\nfrom solution import greet\n\n"
        "@pytest.mark.parametrize('name', ['Ann', 'Bo'])\n"
        "def test_greet(name, capsys):\n    greet(name)\n"
        "    assert capsys.readouterr().out == f'Hello, {name}!\\n'\n"
    )
    assert _run(RIGHT, test=suite).status == "ok"
    assert _run('def greet(name):\n    print("Hello, Ann!")\n', test=suite).status == "wrong"


def test_other_fixtures_are_still_no_pass():
    suite = "from solution import greet\n\ndef test_g(monkeypatch, capsys):\n    greet('a')\n"
    verdict = _run(RIGHT, test=suite)
    assert verdict.status == "error" and "monkeypatch" in verdict.detail
    assert "capsys" not in verdict.detail.split("fixture(s)")[-1]


def test_the_session_reads_and_clears_what_the_program_printed():
    program = (
        "import sys\nprint('loading')\n\ndef say(x):\n    print(x)\n    sys.stderr.write('e')\n"
    )
    with default_pool().session(program, limits=Limits(timeout_s=10)) as session:
        assert session.ready
        assert session.output(start=True) == ("", "")  # what it printed loading is not kept
        session.lookup("say")("hi")
        session.lookup("say")(2)
        calls = session.calls
        assert session.output() == ("hi\n2\n", "ee")
        assert session.output() == ("", "")
        assert session.calls == calls  # reading the output asks the program nothing


def test_what_is_printed_is_capped():
    program = "def spam():\n    for _ in range(3000):\n        print('x' * 999)\n"
    with default_pool().session(program, limits=Limits(timeout_s=20)) as session:
        session.output(start=True)
        session.lookup("spam")()
        out, _ = session.output()
    assert len(out) == 1 << 20


def test_a_capsys_test_the_builtins_answered_is_no_pass():
    """Reading the output asked the program nothing, but counted as reaching it: an empty
    program passed a ``max`` task under ``from solution import *`` (the capsys review)."""
    suite = "from solution import *\n\ndef test_max(capsys):\n    assert max([1, 5, 3]) == 5\n"
    assert _run("pass\n", test=suite).status == "wrong"


def _show_suite(expected: str) -> str:
    """A module whose test prints ``show(42)`` and checks what it printed: ``out <expected>``."""
    return (
        "from solution import show\n\ndef test_show(capsys):\n    show(42)\n"
        f"    assert capsys.readouterr().out {expected}\n"
    )


@pytest.mark.parametrize("bad", ["sys.stdout.write(42)", "sys.stdout.write(b'hi')"])
def test_writes_python_refuses_still_raise(bad):
    """A capture stream that took anything turned a ``TypeError`` into a pass."""
    program = f"import sys\n\ndef show(x):\n    {bad}\n    return x\n"
    assert _run(program, tests=["assert show(3) == 3"]).status == "wrong"
    assert _run(program, test=_show_suite("in ('42', 'hi')")).status == "wrong"


def test_streams_keep_their_api_and_only_capsys_tests_capture():
    program = (
        "import sys, faulthandler\n\ndef show(x):\n    faulthandler.enable()\n"
        "    sys.stdout.buffer.write(b'')\n    assert sys.stdout.encoding.lower() == 'utf-8'\n"
        "    sys.stdout.reconfigure(line_buffering=True)\n    print(x)\n    return x\n"
    )
    assert _run(program, tests=["assert show(3) == 3"]).status == "ok"
    assert _run(program, test=_show_suite("== '42\\n'")).status == "ok"


def test_a_test_class_method_takes_capsys():
    suite = (
        "from solution import greet\n\nclass TestGreet:\n    def test_bob(self, capsys):\n"
        "        greet('Bob')\n        assert capsys.readouterr().out == 'Hello, Bob!\\n'\n"
    )
    assert _run(RIGHT, test=suite).status == "ok"
    assert _run('def greet(name):\n    print("Hi")\n', test=suite).status == "wrong"


def test_program_code_run_by_reading_the_output_cannot_mask_a_wrong_answer():
    """A stream whose ``fileno`` raised ``ImportError`` read as the test's own missing module:
    a wrong answer became a masked ``error`` (the second capsys review)."""
    trick = (
        "import sys\n\nclass _Out:\n    def write(self, s):\n        return len(s)\n\n"
        "    def flush(self):\n        pass\n\n    def fileno(self):\n"
        "        raise ImportError('no')\n\nsys.stdout = _Out()\n\n"
        "def greet(name):\n    print('Hi')\n"
    )
    assert _run(trick, test=SUITE).status == "wrong"


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_a_stream_replaced_while_loading_still_captures(stream):
    program = f"import io, sys\nsys.{stream} = io.StringIO()\n\n" + RIGHT
    assert _run(program, test=SUITE).status == "ok"


def test_the_test_codes_own_prints_stay_out_of_the_console(capsys, tmp_path):
    """A dataset's debug ``print`` in its tests reached the trainer's console once per answer
    graded; pytest captures it, the harness drops it. A ``print`` to a file still writes."""
    path = tmp_path / "data.txt"
    suite = (
        "from solution import first\n\ndef test_first():\n    print('TEST-NOISE')\n"
        f"    with open({str(path)!r}, 'w') as fh:\n        print('7', file=fh)\n"
        f"    assert first({str(path)!r}) == '7'\n"
    )
    right = "def first(path):\n    with open(path) as fh:\n        return fh.read().strip()\n"
    verdict = _run(right, test=suite)
    assert "TEST-NOISE" not in capsys.readouterr().out
    # the sandbox may not read the harness's temp folder; the file was written either way
    assert path.read_text() == "7\n", verdict.detail
    mbpp = _run("def one():\n    return 1\n", tests=["print('MBPP-NOISE')", "assert one() == 1"])
    assert mbpp.status == "ok" and "MBPP-NOISE" not in capsys.readouterr().out


def test_a_test_that_captures_its_own_prints_still_sees_them():
    """``redirect_stdout`` or a swapped ``sys.stdout`` in the test: the print goes there, as in
    Python (the quiet print had dropped it, and a right answer failed; the print review)."""
    add = "def add(a, b):\n    return a + b\n"
    tests = [
        "import contextlib, io\nb = io.StringIO()\nwith contextlib.redirect_stdout(b):\n"
        "    print(add(1, 2))\nassert b.getvalue() == '3\\n'"
    ]
    assert _run(add, tests=tests).status == "ok"
    assert _run("def add(a, b):\n    return 0\n", tests=tests).status == "wrong"


def test_an_entry_point_named_print_is_the_programs():
    test = "def check(candidate):\n    assert candidate(1) == 2\n"
    assert _run("def print(x):\n    return 2 * x\n", test=test, entry_point="print").passed
    assert _run("def print(x):\n    return x\n", test=test, entry_point="print").status == "wrong"
