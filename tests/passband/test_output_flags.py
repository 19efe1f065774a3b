"""Flags that name where output goes or what runs it are checked before any work: ``report
--out`` on a file, ``score --device`` this machine lacks or misspelled, ``score --plot`` on a
directory. Each is a message naming the flag, exit 2, and nothing loaded, sampled or written."""

from __future__ import annotations

import pytest

from passband.cli import main


def test_report_out_on_a_file_is_a_usage_error_naming_the_flag(tmp_path, capsys, make_run):
    run = make_run(tmp_path / "run", steps=3)
    metrics = (run / "metrics.jsonl").read_text()
    assert main(["report", str(run), "--out", str(run / "metrics.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "is a file, not a folder" in err and "Traceback" not in err
    assert (run / "metrics.jsonl").read_text() == metrics  # untouched
    (tmp_path / "afile").write_text("x")
    assert main(["report", str(run), "--out", str(tmp_path / "afile" / "sub")]) == 2
    assert f"{str(tmp_path / 'afile')!r} is a file" in capsys.readouterr().err
    assert main(["report", str(run), "--out", str(tmp_path / "new" / "report")]) == 0
    assert (tmp_path / "new" / "report" / "index.html").is_file()  # a missing folder is made


def _score(tiny_model, data, out, *extra):
    return main(
        ["score", str(data), "--model", str(tiny_model), "--verifier", "regex"]
        + ["--prompt-column", "question", "--ref", "pattern=pattern", "--k", "2"]
        + ["--max-tokens", "4", "--no-progress", "--out", str(out), *extra]
    )


@pytest.mark.parametrize(
    "device,message",
    [
        ("gpu", "--device 'gpu': expected auto, cpu, cuda, cuda:N or mps"),
        ("cuda:x", "--device 'cuda:x': expected auto, cpu, cuda, cuda:N or mps"),
        ("cuda:999", "--device cuda:999"),
    ],
)
def test_score_device_is_checked_before_the_model_loads(
    tiny_model, arithmetic_rows, tmp_path, capsys, device, message
):
    out = tmp_path / "scored.jsonl"
    assert _score(tiny_model, arithmetic_rows, out, "--device", device) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and "Loading weights" not in err
    assert not out.exists() and not (tmp_path / "scored.jsonl.journal.jsonl").exists()


def test_score_device_cuda_without_a_gpu_names_the_flag(
    tiny_model, arithmetic_rows, tmp_path, capsys
):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    assert _score(tiny_model, arithmetic_rows, tmp_path / "s.jsonl", "--device", "cuda") == 2
    err = capsys.readouterr().err
    assert "--device cuda: no CUDA device here" in err and "--device cpu" in err


def test_score_plot_on_a_directory_fails_before_sampling(
    tiny_model, arithmetic_rows, tmp_path, capsys
):
    (tmp_path / "plots").mkdir()
    out = tmp_path / "scored.jsonl"
    assert _score(tiny_model, arithmetic_rows, out, "--plot", str(tmp_path / "plots")) == 2
    err = capsys.readouterr().err
    assert "--plot" in err and "is a directory, not a file" in err and "Traceback" not in err
    assert not out.exists() and not (tmp_path / "scored.jsonl.journal.jsonl").exists()
    plot = tmp_path / "plots" / "hist.png"  # a file inside it is fine: scored and plotted
    assert _score(tiny_model, arithmetic_rows, out, "--plot", str(plot), "--device", "cpu") == 0
    assert out.is_file() and plot.is_file()


@pytest.mark.parametrize("device", ["xpu", "hpu", "mps:0", "cpu"])
def test_a_device_kind_torch_knows_is_passed_on(device):
    """The first version of the check refused xpu, hpu and mps:0, which score passed to torch."""
    from passband._score_checks import check_device

    assert check_device(device) is None  # no UsageError: the model load says what is lacking
