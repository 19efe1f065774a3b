"""``passband report``: files, PNG/HTML validity, text summary, partial runs, a real run, Chromium.
The outlier rules, empty states and views at scale: test_report_views.py; real runs in a browser:
test_report_runs.py."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from passband._report import format_summary, run_alerts, summarize, write_report
from passband._rundir import load_run, read_jsonl
from passband.cli import main
from passband.errors import UsageError
from passband.plots import CHARTS

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
STEMS = [stem for stem, *_ in CHARTS]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _assert_png(path: Path) -> None:
    import matplotlib.image

    assert path.read_bytes()[:8] == PNG_MAGIC
    pixels = matplotlib.image.imread(path)
    assert pixels.shape[0] > 100 and pixels.shape[1] > 100
    assert pixels.std() > 0.01  # not a blank canvas


@pytest.fixture(scope="module")
def healthy(tmp_path_factory, make_run):
    """One rendered report of a healthy 40-step run, shared (rendering costs seconds)."""
    return write_report(make_run(tmp_path_factory.mktemp("healthy") / "run", steps=40))


def test_report_writes_valid_pngs_and_html(healthy):
    assert sorted(healthy.charts) == sorted(STEMS) and healthy.skipped == {}
    for path in healthy.charts.values():
        _assert_png(path)
    page = healthy.html.read_text()
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert page.count('src="data:image/png;base64,') == len(STEMS)
    assert "http://" not in page and "https://" not in page  # nothing fetched from the network
    assert 'http-equiv="refresh"' not in page  # not live
    assert '<table class="summary">' in page and "pass rate (final)" in page


def test_text_summary_content(healthy):
    text = healthy.text
    assert re.search(r"steps\s+40 logged, last step 40 of 40 \(finished\)", text)
    final = json.loads((healthy.run_dir / "metrics.jsonl").read_text().splitlines()[-1])[
        "pass_rate"
    ]
    assert f"{final:.3f} at step 40" in text.split("pass rate (final)")[1].splitlines()[0]
    assert "75.0% of 320 rolled groups trained on" in text  # 6 effective of 8 rolled per step
    # p0 carries 7/12 of every step's gradient, 7x the median group: the one outlier
    assert re.search(r"outlier prompts\s+1 flagged\. p0: gradient, 7\.0x the step's median", text)
    assert re.search(
        r"gradient concentration \(mean per step\)\s+top 1% carry 58\.3% \(equal "
        r"shares: 16\.7%\)",
        text,
    )
    assert re.search(r"length trend .*tokens \([+-]\d+%\)", text) and "alerts: none" in text


def test_length_inflation_is_marked_and_listed(tmp_path, make_run):
    run = make_run(tmp_path / "run", steps=60, inflate_from=30)
    from passband.plots import inflation_steps

    marked = inflation_steps(load_run(run).metrics)
    assert marked and min(marked) > 30
    assert run_alerts(load_run(run)) == []  # rows carry an empty "alerts" list: nothing logged ...
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    for row in rows:
        row.pop("alerts")  # ... without the field, the report replays the monitor itself
    _write_jsonl(run / "metrics.jsonl", rows)
    alerts = run_alerts(load_run(run))
    assert alerts and all(text.startswith("length_inflation") for _, text in alerts)
    assert alerts[0][0] == marked[0] and "replayed" in alerts[0][1]
    summary = format_summary(summarize(load_run(run)), alerts, [])
    assert f"step {marked[0]}: length_inflation: mean completion length grew" in summary


def test_partial_run_truncated_line_and_no_curriculum(tmp_path, make_run):
    run = make_run(tmp_path / "run", steps=10, curriculum=False)
    with open(run / "metrics.jsonl", "a") as f:
        f.write('{"step": 11, "pass_rate": 0.')  # the trainer is mid-write
    (run / "groups.jsonl").unlink()
    rows, bad, truncated = read_jsonl(run / "metrics.jsonl")
    assert len(rows) == 10 and bad == 0 and truncated
    report = write_report(run, live=True, refresh_s=7)
    assert {
        "curriculum",
        "pass_rate_histogram",
        "concentration",
        "outliers",
        "reward_distributions",
        "pass_rate_moves",
    } == set(report.skipped)
    assert "groups.jsonl not found" in report.text and "last line is incomplete" in report.text
    page = report.html.read_text()
    assert '<meta http-equiv="refresh" content="7">' in page and "Not drawn: " in page
    for path in report.charts.values():
        _assert_png(path)


def test_missing_keys_do_not_break_charts(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    _write_jsonl(run / "metrics.jsonl", [{"step": i, "pass_rate": 0.1 * i} for i in range(1, 6)])
    report = write_report(run)
    assert set(report.charts) == {"accuracy_length"}
    assert "optimization" in report.skipped and "length trend" in report.text


def test_not_a_run_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(UsageError, match="neither metrics.jsonl"):
        load_run(tmp_path)
    with pytest.raises(UsageError, match="does not exist"):
        load_run(tmp_path / "nope")
    assert main(["report", str(tmp_path)]) == 2
    assert "is not a training run" in capsys.readouterr().err


def test_run_without_steps_yet(tmp_path, capsys):
    (tmp_path / "config.json").write_text("{}")
    assert main(["report", str(tmp_path)]) == 0
    assert "no steps recorded yet" in capsys.readouterr().out


def test_watch_stops_when_run_finished(tmp_path, capsys, make_run):
    make_run(tmp_path / "run", steps=5)
    assert main(["report", str(tmp_path / "run"), "--watch", "0.1"]) == 0
    out = capsys.readouterr().out  # one status line, then the text summary for SSH users
    assert "5 logged, last step 5 of 5 (finished)" in out and "pass rate (final)" in out
    assert 'http-equiv="refresh"' not in (tmp_path / "run/report/index.html").read_text()


@pytest.mark.slow  # renders the report three or more times in a thread (~10 s on 2 busy cores)
def test_watch_refreshes_while_live_and_stops_when_finished(tmp_path, make_run):
    import threading
    import time

    run = make_run(tmp_path / "run", steps=5, max_steps=8)
    page = run / "report/index.html"
    result = {}
    watcher = threading.Thread(
        target=lambda: result.setdefault("rc", main(["report", str(run), "--watch", "0.2"])),
        daemon=True,
    )
    watcher.start()
    deadline = time.monotonic() + 60
    while not (page.is_file() and 'http-equiv="refresh"' in page.read_text()):
        assert time.monotonic() < deadline and watcher.is_alive(), "no live page was rendered"
        time.sleep(0.1)
    assert "5 logged, last step 5 of 8 (live)" in page.read_text()
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    with open(run / "metrics.jsonl", "a") as f:  # the run goes on and reaches max_steps
        for step in (6, 7, 8):
            f.write(json.dumps({**rows[-1], "step": step}) + "\n")
    watcher.join(timeout=60)
    assert not watcher.is_alive() and result["rc"] == 0
    final = page.read_text()
    assert 'http-equiv="refresh"' not in final and "last step 8 of 8 (finished)" in final


@pytest.mark.slow  # the demo pipeline, shortened: a real GRPO run of a few steps (~30-60 s)
def test_report_of_a_real_short_demo_run(tmp_path, capsys):
    from passband.demo.pipeline import DemoConfig, run_demo
    from passband.demo.sft import SFTConfig

    cfg = DemoConfig.quick(
        output_dir=str(tmp_path / "run"),
        n_train=100,
        n_heldout=10,
        grpo_steps=4,
        prompts_per_step=4,
        beta=0.01,
        sft=SFTConfig(steps=0),
        checkpoint_every=2,
        use_curriculum=True,
        progress=False,
    )  # the curriculum chart needs it
    run_demo(cfg, log=lambda line: None)
    assert main(["report", str(tmp_path / "run")]) == 0
    text = capsys.readouterr().out
    assert re.search(r"steps\s+4 logged, last step 4 of 4 \(finished\)", text)
    last = json.loads((tmp_path / "run/metrics.jsonl").read_text().splitlines()[-1])
    assert f"{last['pass_rate']:.3f} at step 4" in text and "effective-group share" in text
    assert re.search(r"outlier prompts\s+none \(", text)  # no false alarm on the demo
    report_dir = tmp_path / "run/report"
    page = (report_dir / "index.html").read_text()
    # 4 steps of 4 prompts out of 100: no prompt is seen twice; an untrained model may leave no
    # group with signal; per-phase times arrive with the trainer that logs them. Each chart is
    # drawn from what the trainer logs, or says which of these it is waiting for.
    effective = sum(
        json.loads(x)["groups/effective"] for x in (tmp_path / "run/metrics.jsonl").open()
    )
    waiting = {
        "pass_rate_moves": "no prompt was checked more than once yet",
        "time": "per-phase times (time/sample_s, time/generate_s, ...) not logged by this run",
    }
    if effective == 0:
        waiting["concentration"] = "no effective group carried a gradient share"
    for stem in STEMS:
        if (report_dir / f"{stem}.png").is_file():
            _assert_png(report_dir / f"{stem}.png")
        else:
            assert stem in waiting and f"Not drawn: {waiting[stem]}" in page, stem
    assert page.count("data:image/png;base64,") == len(list(report_dir.glob("*.png")))


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# Appended to a copy of the page: after load, list every <img> with the figure it sits in, whether
# it decoded, its natural size and its laid-out size, in a <pre> that --dump-dom prints.
_PROBE = """<script>window.addEventListener("load", () => {
  const rows = [...document.images].map(i => {
    const r = i.getBoundingClientRect();
    return [i.closest("figure").id, i.complete, i.naturalWidth, i.naturalHeight,
            Math.round(r.width), Math.round(r.height), getComputedStyle(i).visibility].join(" ");
  });
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = "\\n" + rows.join("\\n") + "\\n";
  document.body.appendChild(pre);
});</script>"""


@pytest.mark.slow  # starts a browser (~5-10 s)
@pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (Debian: apt-get install chromium); CI installs it",
)
def test_page_shows_every_chart_in_headless_chromium(healthy, tmp_path):
    import matplotlib.image

    report = healthy
    probe = report.html.with_name("probe.html")
    probe.write_text(report.html.read_text().replace("</body>", _PROBE + "</body>"))
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1200,900",
        "--virtual-time-budget=5000",
        "--dump-dom",
        probe.as_uri(),
    ]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, f"the probe did not run; chromium printed: {dom[:500]!r}"
    shown = {}
    for line in found.group(1).strip().splitlines():
        figure, complete, nat_w, nat_h, w, h, visibility = line.split()
        shown[figure.removeprefix("chart-")] = (
            complete,
            int(nat_w),
            int(nat_h),
            int(w),
            int(h),
            visibility,
        )
    assert sorted(shown) == sorted(STEMS)
    for stem, (complete, nat_w, nat_h, w, h, visibility) in shown.items():
        height, width = matplotlib.image.imread(report.charts[stem]).shape[:2]
        assert complete == "true" and (nat_w, nat_h) == (width, height), stem  # decoded, whole
        assert w > 300 and h > 100 and visibility == "visible", stem  # laid out on the page


def test_group_share_counts_surplus_groups_as_signal_not_as_trained(tmp_path):
    """Groups with signal beyond prompts_per_step are observed, not trained: the summary tells
    the two shares apart (a run of 2 steps: 16 rolled, 12 trained, 2 more with signal)."""
    from passband._report import _group_rows
    from passband._rundir import RunData

    rows = [
        {"step": s, "groups/rolled": 8, "groups/effective": 6, "groups/surplus": 1} for s in (1, 2)
    ]
    (label, text), *_ = _group_rows(RunData(tmp_path, metrics=rows))
    assert label == "effective-group share"
    assert text == "75.0% of 16 rolled groups trained on, 87.5% carried signal"
    old = [{k: v for k, v in r.items() if k != "groups/surplus"} for r in rows]
    assert _group_rows(RunData(tmp_path, metrics=old))[0][1] == (
        "75.0% of 16 rolled groups trained on"
    )


@pytest.mark.parametrize(
    "used, unused, said",
    [
        (24, 2, "24 prompts started from pre-scores; 2 pre-scores matched no prompt"),
        (0, 0, "none (cold start)"),
    ],
)
def test_the_summary_says_whether_the_curriculum_started_from_pre_scores(
    tmp_path, make_run, used, unused, said
):
    """Only metrics.jsonl held it: a run on priors and one at prior_weight 0 read alike."""
    run_dir = make_run(tmp_path / "run", steps=3)
    path = run_dir / "metrics.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    counts = {"curriculum/priors/used": used, "curriculum/priors/unused": unused}
    _write_jsonl(path, [{**row, **counts} for row in rows])
    summary = dict(summarize(load_run(run_dir)))
    assert summary["curriculum priors"] == said
