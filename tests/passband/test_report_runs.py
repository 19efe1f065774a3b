"""The report as it will be judged: real short GRPO runs (tiny model built from a config), rendered
and opened in headless Chromium. A demo-like run must raise no false alarm; a run with one planted
prompt whose reward is 10x the others' must flag that prompt, name it, and show it."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from passband._report import write_report
from passband.plots import CHARTS

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:passband.verify_batch")]

PLANTED = "7"  # the prompt id (row index) whose reward is 10x larger


def _digit_reward():
    """A closure (runs in this process, like the trainer tests' rewards): 1 when the answer starts
    with a digit, which an untrained model does about half the time, so groups disagree; the
    planted row's reward is ``scale`` = 10 times that."""

    def reward(completion, scale, **row):
        return float(scale) * float(completion[:1].isdigit())

    return reward


def _run(out, planted: str | None):
    """8 real GRPO steps of a tiny Qwen2 (built from a config) with the curriculum on 16 prompts."""
    import torch

    from passband.demo import ModelSize, build_model, build_tokenizer
    from passband.trainer import GRPOConfig, GRPOTrainer

    torch.manual_seed(0)
    tokenizer = build_tokenizer()
    model = build_model(
        tokenizer,
        ModelSize(hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64),
        seed=0,
    )
    rows = [{"prompt": f"{i}+{i}=", "scale": 10.0 if str(i) == planted else 1.0} for i in range(16)]
    cfg = GRPOConfig(
        group_size=8,
        prompts_per_step=8,
        max_new_tokens=4,
        learning_rate=1e-3,
        beta=0.0,
        pretrained=False,
        max_steps=8,
        output_dir=str(out),
        use_curriculum=True,
        progress=False,
        seed=0,
        checkpoint_every=8,
    )
    GRPOTrainer(model, tokenizer, rows, _digit_reward(), cfg).train()
    return write_report(out)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("planted") / "run", PLANTED)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The same demo-like run with every prompt on one scale."""
    return _run(tmp_path_factory.mktemp("demo") / "run", None)


def test_planted_outlier_is_flagged_named_and_shown(planted):
    flagged = {f.prompt for f in planted.flags}
    assert flagged == {PLANTED}, [(f.prompt, f.rule, f.reason) for f in planted.flags]
    flag = planted.flags[0]
    assert flag.rule == "reward scale" and flag.ratio >= 5
    summary = dict(planted.summary)["outlier prompts"]
    assert summary.startswith("1 flagged. 7: reward scale") and "range [0, 10]" in summary
    page = planted.html.read_text()
    assert '<section class="flagged" id="flagged">' in page and "<td>7</td>" in page
    assert "outliers" in planted.charts


def test_demo_like_run_raises_no_false_alarm(demo):
    assert demo.flags == []
    rows = dict(demo.summary)
    assert rows["outlier prompts"].startswith("none (no group above 4x")
    assert rows["inactive by configuration"] == "clip inactive: mu = 1; no KL: beta = 0"
    assert 'id="flagged"' not in demo.html.read_text()
    # every chart carries information or says in one line why it cannot
    assert set(demo.charts) | set(demo.skipped) == {stem for stem, *_ in CHARTS}
    assert not demo.skipped  # the trainer logs time/<phase>_s, so the time chart draws too
    assert "time" in demo.charts
    assert "pass_rate_moves" in demo.charts  # 16 prompts over 8 steps: seen more than once


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _screenshot(page, png, profile) -> None:
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        "--window-size=1200,2400",
        "--virtual-time-budget=5000",
        f"--screenshot={png}",
        page.as_uri(),
    ]
    subprocess.run(cmd, capture_output=True, timeout=120, check=False)


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (Debian: apt-get install chromium); CI installs it",
)
def test_flagged_prompt_stands_out_in_the_browser(planted, demo, tmp_path):
    """The top of each page as a browser draws it: the planted run shows a red flagged-prompt box
    above the fold, the demo run shows none."""
    import matplotlib.image

    reds = {}
    for name, report in (("planted", planted), ("demo", demo)):
        png = tmp_path / f"{name}.png"
        _screenshot(report.html, png, tmp_path / f"profile-{name}")
        pixels = matplotlib.image.imread(png)[:, :, :3]
        box = (
            (abs(pixels[..., 0] - 1.0) < 0.01)
            & (abs(pixels[..., 1] - 0xF4 / 255) < 0.01)
            & (abs(pixels[..., 2] - 0xF2 / 255) < 0.01)
        )  # the flagged section's #fff4f2 background
        reds[name] = int(box.sum())
    assert reds["planted"] > 20_000 and reds["demo"] < 500, reds  # a few anti-aliased pixels match
    assert re.search(r"Flagged prompts \(1\)", planted.html.read_text())
