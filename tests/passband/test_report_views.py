"""The report's questions, answered fast: the outlier rules against the trainer's real advantage
functions, empty states that name their configuration, per-prompt views at scale, and the one
module that imports matplotlib."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from passband._report import summarize, write_report
from passband._rundir import load_run
from passband._runstats import (
    RunView,
    flag_outliers,
    gradient_ratios,
    gradient_threshold,
    most_visited,
    pass_rate_moves,
    top_share,
)
from passband.cli import main
from passband.plots.steps import _component_scales, chart_optimization, chart_reward, chart_time

ROOT = Path(__file__).resolve().parents[2]


def test_top_share_counts_at_least_one_group_and_compares_with_equal_shares():
    assert top_share([1.0] * 16, 0.01) == (1 / 16, 1 / 16)  # "top 1%" of 16 groups is 1 group
    share, equal = top_share([10.0] + [1.0] * 99, 0.10)
    assert equal == 0.10 and share == pytest.approx(19 / 109)


def _groups(steps: int, *, scale: dict[str, float], advantage: str, seed: int = 0) -> list[dict]:
    """groups.jsonl rows from the trainer's own advantage functions and |advantage|·tokens weights:
    binary rewards at pass rates 0.1-0.9, lengths 20-60 tokens, 16 prompts per step, G = 8."""
    import torch

    from passband.trainer.advantages import get_advantage

    rng, rows = random.Random(seed), []
    for step in range(1, steps + 1):
        prompts = [f"p{rng.randrange(400)}" for _ in range(15)] + ["planted"]
        rewards = []
        for p in prompts:
            rate = rng.uniform(0.1, 0.9)
            r = [float(rng.random() < rate) for _ in range(8)]
            r[0], r[1] = 1.0, 0.0  # mixed: every group is kept
            rewards.append([x * scale.get(p, 1.0) for x in r])
        adv = get_advantage(advantage)(torch.tensor(rewards), torch.ones(16, 8, dtype=torch.bool))
        weights = [sum(abs(a) * rng.randint(20, 60) for a in row) for row in adv.tolist()]
        rows += [
            {
                "step": step,
                "prompt_id": p,
                "rewards": r,
                "passes": int(sum(x > 0 for x in r)),
                "kept": True,
                "grad_share": w / sum(weights),
            }
            for p, r, w in zip(prompts, rewards, weights)
        ]
    return rows


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _visits(rows):
    from passband._runstats import visits_of

    return visits_of(rows)


@pytest.mark.parametrize("advantage", ["group", "no_std"])
def test_ordinary_variation_raises_no_flag(advantage):
    visits = _visits(_groups(60, scale={}, advantage=advantage))
    assert flag_outliers(visits, 8, advantage) == []
    worst = max(gradient_ratios(visits).values())
    assert 1.2 < worst < gradient_threshold(8, advantage)  # variation exists, below the bar


def test_a_prompt_with_a_10x_reward_is_flagged_by_both_rules_without_std_scaling():
    visits = _visits(_groups(20, scale={"planted": 10.0}, advantage="no_std"))
    flags = flag_outliers(visits, 8, "no_std")
    assert {(f.prompt, f.rule) for f in flags} == {
        ("planted", "gradient"),
        ("planted", "reward scale"),
    }
    gradient = next(f for f in flags if f.rule == "gradient")
    assert (
        gradient.flagged_visits >= 15 and gradient.ratio > 6
    )  # a visit at pass rate 1/8 may stay under


def test_under_std_scaling_the_10x_prompt_is_a_reward_scale_outlier_only():
    """Dividing by the group std already equalises its gradient: the flag says so."""
    flags = flag_outliers(
        _visits(_groups(20, scale={"planted": 10.0}, advantage="group")), 8, "group"
    )
    assert [(f.prompt, f.rule) for f in flags] == [("planted", "reward scale")]


def test_usually_failed_prompts_with_a_penalty_do_not_make_solved_ones_outliers():
    rows = []
    for step in range(1, 41):
        for k in range(16):  # 80% of groups fail with a small length penalty, the rest are solved
            r = [-0.05] * 7 + [-0.04] if k < 13 else [1.0, 0.0, 1.0, -0.05, 1.0, 0.0, 0.0, 1.0]
            rows.append(
                {
                    "step": step,
                    "prompt_id": f"q{step}-{k}",
                    "rewards": r,
                    "passes": sum(x > 0.5 for x in r),
                    "kept": True,
                    "grad_share": 1 / 16,
                }
            )
    assert flag_outliers(_visits(rows), 8, "group") == []


def test_inactive_gauges_say_why_in_one_line(tmp_path, make_run):
    run = make_run(tmp_path / "run", steps=6)
    config = json.loads((run / "config.json").read_text())
    config["trainer"].update(mu=1, beta=0.0, lr_schedule="constant")
    (run / "config.json").write_text(json.dumps(config))
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    for row in rows:  # what the trainer logs at mu = 1, beta = 0: a flat zero and no KL
        row.update(clip_fraction=0.0, kl=None, lr=1e-6)
        for key in [k for k in row if k.startswith("time/") and k != "time/step_s"]:
            del row[key]
    _write_jsonl(run / "metrics.jsonl", rows)
    view = RunView(load_run(run))
    assert view.inactive("clip_fraction").startswith("clip inactive: mu = 1")
    assert view.inactive("kl").startswith("no KL: beta = 0")
    assert view.inactive("lr").startswith("lr constant: 1e-06")
    assert view.inactive("entropy") is None
    assert (
        dict(summarize(view.run, view=view))["inactive by configuration"]
        == "clip inactive: mu = 1; no KL: beta = 0"
    )
    assert chart_optimization(view, tmp_path / "opt.png") is None
    assert chart_time(view, tmp_path / "time.png") == (
        "per-phase times (time/sample_s, "
        "time/generate_s, ...) not logged by this run "
        "(time per step: mean 2.00 s)"
    )


def test_time_chart_stacks_the_logged_phases(tmp_path, make_run):
    view = RunView(load_run(make_run(tmp_path / "run", steps=6)))
    assert chart_time(view, tmp_path / "time.png") is None and (tmp_path / "time.png").is_file()


def test_per_prompt_views_scale_to_many_prompts(tmp_path, make_run):
    """30,000 prompts seen 1-3 times each: every per-prompt chart is drawn at its fixed size, the
    table stays 15 rows, and the movement grid has at most (G+1)^2 cells."""
    rng, rows = random.Random(1), []
    for i in range(30_000):
        for visit in range(1 + (i % 7 == 0) + (i % 49 == 0)):
            r = [float(rng.random() < 0.2 + 0.3 * visit) for _ in range(4)]
            rows.append(
                {
                    "step": 1 + visit * 50 + i // 1000,
                    "prompt_id": i,
                    "rewards": r,
                    "passes": int(sum(r)),
                    "kept": len(set(r)) > 1,
                    "grad_share": 1e-3 * (len(set(r)) > 1),
                }
            )
    run = make_run(tmp_path / "run", steps=120)
    _write_jsonl(run / "groups.jsonl", sorted(rows, key=lambda g: g["step"]))
    report = write_report(run)
    for stem in ("concentration", "outliers", "reward_distributions", "pass_rate_moves"):
        assert stem in report.charts, report.skipped.get(stem)
    page = report.html.read_text()
    table = page.split('id="visited"')[1]
    assert "The 15 most-visited of 30,000 prompts" in table and table.count("<tr>") == 16
    visits = _visits(rows)
    assert len(pass_rate_moves(visits)) == 30_000 // 7 + 1
    ranked, distinct = most_visited(visits, 5)
    assert distinct == 30_000 and [len(v) for _, v in ranked] == [3] * 5


def test_component_scales_are_logged_and_drawn(tmp_path, make_run):
    from passband.trainer._metrics import component_metrics
    from passband.verifiers import Verdict

    verdicts = [
        Verdict(1.0 + p, "ok", components={"correct": 1.0, "overlong": p})
        for p in (-0.5, 0.0, -1.5)
    ] + [Verdict(0.0, "wrong", components={"correct": 0.0, "overlong": 0.0})]
    out = component_metrics(verdicts)
    assert out["reward/correct"] == 0.75 and out["reward_scale/correct"] == pytest.approx(0.4330127)
    assert out["reward_scale/overlong"] == pytest.approx(0.6123724)
    view = RunView(load_run(make_run(tmp_path / "run", steps=6)))
    assert (
        chart_reward(view, tmp_path / "reward.png") is None and (tmp_path / "reward.png").is_file()
    )
    assert _component_scales(view.run.metrics, ["length_penalty", "math"]) == (
        [0.01, 0.45],
        "std across completions (median over steps)",
    )  # what make_run logs


def test_report_cli_top_and_deprecated_last(tmp_path, capsys, make_run):
    run = make_run(tmp_path / "run", steps=4)
    assert main(["report", str(run), "--top", "3", "--last", "8"]) == 0
    captured = capsys.readouterr()
    assert "--last is deprecated and ignored" in captured.err
    assert (run / "report/index.html").read_text().split('id="visited"')[1].count("<tr>") == 4
    assert main(["report", str(run), "--top", "0"]) == 2


def test_matplotlib_is_imported_in_one_module_only():
    """One way to draw: every picture goes through passband.curriculum.plot."""
    pattern = re.compile(r"^\s*(import matplotlib|from matplotlib)", re.M)
    found = sorted(
        str(p.relative_to(ROOT))
        for folder in ("passband", "curriculum", "trainer", "verifiers", "sandbox")
        for p in (ROOT / folder).rglob("*.py")
        if pattern.search(p.read_text())
    )
    assert found == ["curriculum/plot.py"]
