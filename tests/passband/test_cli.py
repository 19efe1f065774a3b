"""The console command: --help lists every subcommand, and a bad invocation is a usage error."""

import subprocess
import sys

import pytest

from passband.cli import main

SUBCOMMANDS = ["demo", "train", "score", "verify", "report", "doctor", "sandbox"]


def test_help_lists_every_subcommand():
    done = subprocess.run(
        [sys.executable, "-m", "passband.cli", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for name in SUBCOMMANDS:
        assert f"\n    {name} " in done.stdout, (name, done.stdout)


def test_no_subcommand_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out


def test_unknown_subcommand_is_an_argparse_error():
    with pytest.raises(SystemExit) as info:
        main(["frobnicate"])
    assert info.value.code == 2


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_each_subcommand_has_help(name, capsys):
    with pytest.raises(SystemExit) as info:
        main([name, "--help"])
    assert info.value.code == 0
    assert "usage: passband " + name in capsys.readouterr().out


def test_overrides_may_follow_options_but_stray_words_may_not(tmp_path, capsys):
    """``train CFG --resume trainer.max_steps=9``: the override after ``--resume`` is kept."""
    from passband import cli

    parser_args = cli.build_parser().parse_known_args(
        ["train", "c.toml", "--resume", "trainer.max_steps=9"]
    )
    assert parser_args[1] == ["trainer.max_steps=9"]  # what main() must fold back in
    missing = tmp_path / "missing.toml"
    assert main(["train", str(missing), "--resume", "trainer.max_steps=9"]) == 2
    err = capsys.readouterr().err
    assert "missing.toml" in err and "unrecognized" not in err  # got past argument parsing
    with pytest.raises(SystemExit) as info:
        main(["train", str(missing), "--resume", "stray"])
    assert info.value.code == 2 and "unrecognized arguments: stray" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["report", str(tmp_path), "trainer.max_steps=9"])  # report takes no overrides
    assert info.value.code == 2


def test_an_uninstalled_checkout_imports_its_subpackages_in_child_processes(tmp_path):
    """A GPU box that cannot pip install runs from the checkout: ``passband.sandbox`` (a top-level
    folder) must import there, also in a forkserver child whose working directory is the checkout.
    ``-S`` leaves out site-packages, and with them the editable install's import hook."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = (
        "import multiprocessing as mp, sys\n"
        "import passband.sandbox\n"
        "def probe(q):\n"
        "    import passband.sandbox as s, passband.curriculum\n"
        "    q.put(s.__file__)\n"
        "if __name__ == '__main__':\n"
        "    ctx = mp.get_context('forkserver')\n"
        "    ctx.set_forkserver_preload(['passband.sandbox'])\n"
        "    q = ctx.Queue(); p = ctx.Process(target=probe, args=(q,)); p.start(); p.join(60)\n"
        "    print(passband.sandbox.__file__, q.get(timeout=5), p.exitcode)\n"
    )
    script = tmp_path / "probe.py"
    script.write_text(code)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-S", str(script)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    parent, child, code = done.stdout.split()
    assert parent == child == str(root / "sandbox" / "__init__.py") and code == "0"


def test_a_command_module_that_cannot_be_imported_is_an_error_not_a_missing_command(monkeypatch):
    import passband.cli as cli

    monkeypatch.setitem(cli._COMMANDS, "ghost", "ghost")
    with pytest.raises(ModuleNotFoundError, match="passband.commands.ghost"):
        cli.build_parser()
