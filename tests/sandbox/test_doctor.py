"""``passband sandbox doctor``: the mechanisms and live hostile probes, through the real CLI."""

from __future__ import annotations

import json

from passband.cli import main


def test_doctor_reports_mechanisms_and_all_probes_pass(capsys):
    assert main(["sandbox", "doctor", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"pid namespace", "network namespace", "landlock", "seccomp", "rlimits"} <= set(
        out["mechanisms"]
    )
    assert out["probes"] and all(out["probes"].values())


def test_doctor_text_output(capsys):
    assert main(["sandbox", "doctor"]) == 0
    text = capsys.readouterr().out
    assert "Isolation mechanisms" in text and "[ok] no network" in text and "FAIL" not in text


def test_sandbox_without_subcommand_is_a_usage_error(capsys):
    assert main(["sandbox"]) == 2
    assert "passband sandbox doctor" in capsys.readouterr().err
