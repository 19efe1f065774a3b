import json
import random

import pytest

from passband.curriculum import (
    Curriculum,
    PrescoreConfig,
    PrescoreError,
    band_class,
    prescore,
    priors_from_rows,
    read_rows,
    write_rows,
)
from passband.curriculum.simulate import CoinFlipGenerator


def _dataset(n: int, seed: int = 0, rates=(0.0, 0.05, 0.3, 0.5, 0.7, 0.95, 1.0)):
    rng = random.Random(seed)
    rows = [{"prompt": f"question {i}", "answer": str(1000 + i)} for i in range(n)]
    table = {r["prompt"]: (rng.choice(rates), r["answer"]) for r in rows}
    return rows, table


class _Crash(Exception):
    pass


class _CrashAfter(CoinFlipGenerator):
    """Dies on its ``limit``-th call, like a run killed between two batches."""

    def __init__(self, table, limit):
        super().__init__(table)
        self.limit = limit

    def __call__(self, prompts, n, seed=0):
        if self.calls + 1 >= self.limit:
            raise _Crash()
        return super().__call__(prompts, n, seed=seed)


def test_adaptive_stops_only_when_the_first_answers_agree(tmp_path):
    rows, table = _dataset(60)
    gen = CoinFlipGenerator(table)
    res = prescore(
        rows,
        gen,
        "exact",
        out_path=tmp_path / "o.jsonl",
        progress=False,
        k=8,
        first=4,
        batch_size=8,
    )
    for row in res.rows:
        p = table[row["prompt"]][0]
        assert row["trials"] in (4, 8)
        if row["trials"] == 4:
            assert row["passes"] in (0, 4)
        if p in (0.0, 1.0):
            assert row["trials"] == 4 and row["passes"] == 4 * p
        assert row["pass_rate"] == row["passes"] / row["trials"]
        assert row["band_class"] == band_class(row["pass_rate"], (0.2, 0.8))
    assert gen.samples == sum(r["trials"] for r in res.rows) == res.samples
    assert res.samples < 8 * 60

    fixed = CoinFlipGenerator(table)
    res = prescore(
        rows, fixed, "exact", out_path=tmp_path / "f.jsonl", progress=False, adaptive=False
    )
    assert {r["trials"] for r in res.rows} == {8} and fixed.samples == 480


def test_adaptive_saves_samples_and_agrees_with_fixed_k(tmp_path):
    """On known pass rates, with a realistic U-shaped mix: fewer samples, same classes mostly."""
    rows, table = _dataset(300, seed=3, rates=(0.0, 0.0, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.98, 1.0))
    fixed = prescore(
        rows,
        CoinFlipGenerator(table),
        "exact",
        out_path=tmp_path / "a.jsonl",
        progress=False,
        adaptive=False,
    )
    adaptive = prescore(
        rows, CoinFlipGenerator(table), "exact", out_path=tmp_path / "b.jsonl", progress=False
    )
    agree = sum(a["band_class"] == f["band_class"] for a, f in zip(adaptive.rows, fixed.rows))
    assert adaptive.samples <= 0.75 * fixed.samples
    assert agree / len(rows) >= 0.9
    assert "saved" in adaptive.summary() and "too_hard" in adaptive.summary()


def test_output_has_score_columns_and_settings(tmp_path):
    rows, table = _dataset(5)
    res = prescore(
        rows,
        CoinFlipGenerator(table),
        "exact",
        out_path=tmp_path / "o.jsonl",
        plot_path=tmp_path / "h.png",
        progress=False,
        k=6,
        first=3,
        settings={"model": "coin", "temperature": 1.0, "max_tokens": 32},
    )
    written = read_rows(tmp_path / "o.jsonl")
    assert written == res.rows
    for row in written:
        assert row["score_k"] == 6 and row["score_model"] == "coin"
        assert row["score_temperature"] == 1.0 and row["score_max_tokens"] == 32
        assert row["score_source"] == "sampled" and row["unchecked"] == 0
    assert (tmp_path / "h.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (tmp_path / "o.jsonl.journal.jsonl").exists()


def test_existing_difficulty_columns_are_read_not_rescored(tmp_path):
    rows, table = _dataset(6)
    rows[0]["pass_rate"], rows[1]["pass_rate"] = 0.9, None  # None: no difficulty yet
    for r in rows[2:]:
        r["pass_rate"] = 0.5
    gen = CoinFlipGenerator(table)
    res = prescore(rows, gen, "exact", out_path=tmp_path / "o.jsonl", progress=False)
    assert gen.samples == res.samples > 0 and res.scored == 1 and res.from_prior == 5
    assert (
        res.rows[0]["band_class"] == "too_easy" and res.rows[0]["score_source"] == "prior:pass_rate"
    )
    assert res.rows[0]["trials"] is None and res.rows[1]["score_source"] == "sampled"

    solve = [
        {
            "prompt": r["prompt"],
            "answer": r["answer"],
            "llama8b_solve_rate": 0.1,
            "qwen_solve_rate": 0.3,
        }
        for r in rows[:2]
    ]
    res = prescore(
        solve, CoinFlipGenerator(table), "exact", out_path=tmp_path / "s.jsonl", progress=False
    )
    assert res.rows[0]["pass_rate"] == pytest.approx(0.2)
    assert res.rows[0]["score_source"] == "prior:llama8b_solve_rate+qwen_solve_rate"
    gen = CoinFlipGenerator(table)
    res = prescore(solve, gen, "exact", out_path=tmp_path / "r.jsonl", progress=False, rescore=True)
    assert res.scored == 2 and gen.samples > 0
    with pytest.raises(PrescoreError, match="expected a rate in"):
        prescore(
            [{"prompt": "q", "pass_rate": 42}],
            gen,
            "exact",
            out_path=tmp_path / "x.jsonl",
            progress=False,
        )


def test_existing_counts_are_kept_as_training_reads_them_and_impossible_ones_refused(tmp_path):
    """Counts alone (no pass_rate) were sampled over and overwritten; 5 passes in 4 trials too,
    where training refuses them."""
    rows, table = _dataset(3)
    rows[0].update(passes=2, trials=4)
    rows[1].update(passes=0, trials=0)  # scoring got no verdict: unscored, sampled
    gen = CoinFlipGenerator(table)
    res = prescore(rows, gen, "exact", out_path=tmp_path / "o.jsonl", progress=False)
    assert res.scored == 2 and res.from_prior == 1
    kept = res.rows[0]
    assert (kept["passes"], kept["trials"], kept["pass_rate"]) == (2, 4, 0.5)
    assert kept["score_source"] == "prior:passes/trials"
    rows[2].update(passes=5, trials=4)
    with pytest.raises(PrescoreError, match="'passes' = 5 with 'trials' = 4"):
        prescore(rows, gen, "exact", out_path=tmp_path / "x.jsonl", progress=False)


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet", ""])
def test_formats_round_trip(tmp_path, suffix):
    rows, table = _dataset(12)
    src = tmp_path / f"in{suffix}"
    write_rows(rows, src)
    assert read_rows(src) == rows
    res = prescore(
        read_rows(src),
        CoinFlipGenerator(table),
        "exact",
        out_path=tmp_path / f"out{suffix}",
        progress=False,
    )
    back = read_rows(tmp_path / f"out{suffix}")
    assert [r["prompt"] for r in back] == [r["prompt"] for r in rows]
    assert [float(r["pass_rate"]) for r in back] == [r["pass_rate"] for r in res.rows]
    assert [r["band_class"] for r in back] == [r["band_class"] for r in res.rows]


def test_crash_then_rerun_equals_uninterrupted_even_with_a_torn_journal(tmp_path):
    rows, table = _dataset(40)
    opts = dict(progress=False, batch_size=4)
    whole = prescore(rows, CoinFlipGenerator(table), "exact", out_path=tmp_path / "w.jsonl", **opts)
    out = tmp_path / "c.jsonl"
    with pytest.raises(_Crash):
        prescore(rows, _CrashAfter(table, limit=9), "exact", out_path=out, **opts)
    journal = tmp_path / "c.jsonl.journal.jsonl"
    finished = len(journal.read_text().splitlines()) - 1
    assert 0 < finished < 40 and not out.exists()
    with open(journal, "a") as f:
        f.write('{"i": 39, "passes": 3, "tri')  # killed in the middle of a write
    again = CoinFlipGenerator(table)
    res = prescore(rows, again, "exact", out_path=out, **opts)
    assert res.resumed == finished
    assert read_rows(out) == read_rows(tmp_path / "w.jsonl") == whole.rows
    assert again.samples < whole.samples  # finished rows were not scored again


def test_a_journal_from_other_settings_is_refused(tmp_path):
    rows, table = _dataset(20)
    out = tmp_path / "o.jsonl"
    with pytest.raises(_Crash):
        prescore(
            rows, _CrashAfter(table, limit=3), "exact", out_path=out, progress=False, batch_size=4
        )
    with pytest.raises(PrescoreError, match="other settings") as refused:
        prescore(
            rows, CoinFlipGenerator(table), "exact", out_path=out, progress=False, batch_size=4, k=6
        )
    # the field and both values, not "(settings differ)"; and how to start over
    assert "(k 8 there, 6 now)" in str(refused.value), refused.value
    assert "--overwrite" in str(refused.value)
    # the same prompts with other answers: the journal's counts would be stale
    edited = [{**r, "answer": "x"} for r in rows]
    with pytest.raises(PrescoreError, match="other settings.*prompts_and_references_sha256"):
        prescore(
            edited, CoinFlipGenerator(table), "exact", out_path=out, progress=False, batch_size=4
        )
    # a journal from before the references were keyed says why it cannot be resumed
    journal = tmp_path / "o.jsonl.journal.jsonl"
    lines = journal.read_text().splitlines()
    header = json.loads(lines[0])
    header["settings"]["prompts_sha256"] = header["settings"].pop("prompts_and_references_sha256")
    journal.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(PrescoreError, match="written by an older passband"):
        prescore(
            rows, CoinFlipGenerator(table), "exact", out_path=out, progress=False, batch_size=4
        )


def test_uncheckable_verdicts_are_not_trials(tmp_path):
    rows, table = _dataset(4, rates=(1.0,))
    rows[0]["answer"] = None  # the exact verifier reports "error": reference missing
    res = prescore(
        rows,
        CoinFlipGenerator(table),
        "exact",
        out_path=tmp_path / "o.jsonl",
        progress=False,
        references={"answer": "answer"},
    )
    assert res.rows[0]["unchecked"] == 8 and res.rows[0]["trials"] == 0
    assert res.rows[0]["pass_rate"] is None and res.rows[0]["band_class"] == "unscored"
    assert [r["pass_rate"] for r in res.rows[1:]] == [1.0, 1.0, 1.0]


def test_math_verifier_through_verify_batch(tmp_path):
    rows, table = _dataset(6, rates=(0.0, 1.0))
    gen = CoinFlipGenerator(table, template="So the result is $\\boxed{%s}$.")
    res = prescore(
        rows,
        gen,
        "math",
        out_path=tmp_path / "o.jsonl",
        progress=False,
        references={"answer": "answer"},
    )
    assert [r["pass_rate"] for r in res.rows] == [table[r["prompt"]][0] for r in rows]


def test_user_mistakes_are_named(tmp_path):
    rows, table = _dataset(3)
    with pytest.raises(PrescoreError, match=r"\['question'\] not in the dataset"):
        prescore(
            rows,
            CoinFlipGenerator(table),
            "exact",
            out_path=tmp_path / "o.jsonl",
            prompt_column="question",
            progress=False,
        )
    with pytest.raises(PrescoreError, match="first=9"):
        prescore(rows, CoinFlipGenerator(table), "exact", out_path=tmp_path / "o.jsonl", first=9)
    with pytest.raises(PrescoreError, match="must return 3 lists of 4 texts"):
        prescore(
            rows,
            lambda prompts, n: [["x"] * n],
            "exact",
            out_path=tmp_path / "o.jsonl",
            progress=False,
        )
    with pytest.raises(ValueError, match="unknown dataset format"):
        read_rows(tmp_path / "data.txt")


def test_rows_that_cannot_be_scored_are_named_with_their_own_columns(tmp_path):
    """One row without the reference column used to crash with a bare KeyError, a null prompt
    said the tokenizer had no chat template, and an empty file was "scored" with no rows."""
    rows, table = _dataset(4)
    rows[1] = {"prompt": "question 1"}  # no answer
    rows[2]["prompt"], rows[3]["prompt"] = None, ""

    def run(data):
        return prescore(
            data,
            CoinFlipGenerator(table),
            "exact",
            out_path=tmp_path / "o.jsonl",
            references={"answer": "answer"},
            progress=False,
        )

    with pytest.raises(PrescoreError) as info:
        run(rows)
    said = str(info.value)
    assert said.startswith("3 of 4 rows cannot be scored: ")
    assert "row 1 lacks column(s) ['answer'] (its columns: prompt)" in said
    assert "row 2 has the prompt None; expected text or a list of chat messages" in said
    assert "row 3 has an empty prompt" in said and "row 0" not in said
    with pytest.raises(PrescoreError, match="holds no rows"):
        run([])
    assert not (tmp_path / "o.jsonl").exists()
    # a row that keeps its existing rate is never sampled: it needs no prompt or answer
    kept = [{"pass_rate": 0.5}, {"prompt": "question 0", "answer": "1000"}]
    assert [r["score_source"] for r in run(kept).rows] == ["prior:pass_rate", "sampled"]


def test_scored_rows_become_curriculum_priors(tmp_path):
    rows, table = _dataset(30)
    res = prescore(
        rows, CoinFlipGenerator(table), "exact", out_path=tmp_path / "o.jsonl", progress=False
    )
    priors = priors_from_rows(res.rows)
    cur = Curriculum(range(len(rows)), priors=priors)
    assert cur.metrics()["priors/used"] == 30
    for i, row in enumerate(res.rows):  # unanimous rows keep their class, early stop or not
        if row["pass_rate"] in (0.0, 1.0):
            assert cur.classify(i) == row["band_class"]
    by_rate = sorted(range(30), key=lambda i: res.rows[i]["pass_rate"])
    estimates = [cur.estimate(i) for i in by_rate]
    assert estimates == sorted(estimates)
    assert json.dumps(cur.state_dict())


def test_prompt_template_builds_the_prompts_the_trainer_will_use(tmp_path):
    rows = [{"question": f"{i}+{i}", "answer": str(2 * i)} for i in range(5)]
    table = {
        f"What is {r['question']}? Think.": (1.0 if i % 2 else 0.0, r["answer"])
        for i, r in enumerate(rows)
    }
    res = prescore(
        rows,
        CoinFlipGenerator(table),
        "exact",
        out_path=tmp_path / "o.jsonl",
        progress=False,
        prompt_template="What is {question}? Think.",
    )
    assert [r["pass_rate"] for r in res.rows] == [0.0, 1.0, 0.0, 1.0, 0.0]
    assert "prompt" not in res.rows[0]  # the dataset keeps its own columns


@pytest.mark.parametrize(
    "field, value",
    [("timeout", float("inf")), ("timeout", 0), ("workers", 0), ("workers", True)],
)
def test_prescore_takes_timeout_and_workers_by_the_verifiers_rule(field, value):
    # the same rule as verify_batch and GRPOConfig (sandbox/_worker_limits.py)
    with pytest.raises(PrescoreError, match=f"{field}={value!r} must be"):
        PrescoreConfig(**{field: value})


def _needs_other_keywords(completion, *, expected):  # the rows give `answer`, not `expected`
    return completion == expected


def _fails_on_some(completion, *, answer):
    if completion.endswith("7"):
        raise RuntimeError("cannot read this one")
    return completion == answer


def test_a_verifier_that_fails_on_every_answer_stops_the_run_naming_its_error(tmp_path):
    """It used to finish with exit 0 and every row 'unscored', the error nowhere in sight."""
    rows, table = _dataset(16)
    with pytest.raises(
        PrescoreError, match=r"failed on all 32 answers of the first batch, e.g. .*expected"
    ):
        prescore(
            rows,
            CoinFlipGenerator(table),
            _needs_other_keywords,
            out_path=tmp_path / "o.jsonl",
            progress=False,
            k=2,
            first=2,
            batch_size=16,
        )
    # the corrected run is not refused for the failed one's journal: it holds no scored row
    out = prescore(
        rows,
        CoinFlipGenerator(table),
        "exact",
        out_path=tmp_path / "o.jsonl",
        progress=False,
        k=2,
        first=2,
        batch_size=16,
    )
    assert out.scored == 16 and all(r["trials"] == 2 for r in out.rows)


def test_answers_that_could_not_be_checked_are_counted_in_the_summary(tmp_path):
    rows, table = _dataset(20)
    res = prescore(
        rows,
        CoinFlipGenerator(table),
        _fails_on_some,
        out_path=tmp_path / "o.jsonl",
        progress=False,
        k=4,
        adaptive=False,
    )
    unchecked = sum(r["unchecked"] for r in res.rows)
    assert 0 < unchecked == res.unchecked < 80
    assert f"{unchecked} answers could not be checked" in res.summary()


def test_a_bad_difficulty_column_is_named_with_its_row(tmp_path):
    rows, table = _dataset(3)
    rows[2]["pass_rate"] = 1.5
    with pytest.raises(PrescoreError, match=r"row 2: difficulty column 'pass_rate' holds 1.5"):
        prescore(rows, CoinFlipGenerator(table), "exact", out_path=tmp_path / "o.jsonl")


def test_a_parquet_output_that_cannot_hold_a_column_is_refused_before_sampling(tmp_path):
    """An answer column of "3201" and 197 crashed pyarrow after every prompt was sampled, and
    only a journal an output in another format cannot resume was left."""
    from passband.errors import DataError

    calls = []

    def generate(prompts, n):
        calls.append(len(prompts))
        return [["4"] * n for _ in prompts]

    rows = [{"prompt": "3201=", "answer": "3201"}, {"prompt": "82+42+73=", "answer": 197}]
    out = tmp_path / "s.parquet"
    with pytest.raises(DataError, match=r"s.parquet: column 'answer' mixes types.*\.jsonl"):
        prescore(rows, generate, "exact", out_path=out, progress=False)
    assert calls == [] and not list(tmp_path.iterdir())  # nothing sampled, no journal
    prescore(rows, generate, "exact", out_path=tmp_path / "s.jsonl", progress=False)
    assert [r["answer"] for r in read_rows(tmp_path / "s.jsonl")] == ["3201", 197]


def test_a_partly_scored_csv_rescored_to_parquet_keeps_numbers(tmp_path):
    """Kept rows of a CSV hold "4" (text) where newly sampled rows hold 4: Parquet refused the
    mixed column after all the sampling. The kept counts and settings are numbers again."""
    rows = [{"prompt": f"{i}+{i}=", "answer": str(2 * i)} for i in range(6)]
    given = dict(progress=False, k=4, settings={"temperature": 0.7, "stop": ["\n\n"]})
    prescore(rows, _right, "exact", out_path=tmp_path / "s.csv", **given)
    partial = read_rows(tmp_path / "s.csv")
    for row in partial[:3]:  # emptied: scored again
        row.update(passes="", trials="", pass_rate="")
    assert partial[3]["passes"] == "4" and partial[3]["score_stop"] == '["\\n\\n"]'  # text
    out = prescore(partial, _right, "exact", out_path=tmp_path / "r.parquet", **given)
    got = read_rows(tmp_path / "r.parquet")
    assert [r["score_source"] for r in got] == ["sampled"] * 3 + ["prior:pass_rate"] * 3
    for row in got:
        assert (row["passes"], row["trials"], row["score_k"]) == (4, 4, 4)
        assert row["score_temperature"] == 0.7 and row["score_stop"] == ["\n\n"]
    assert got[3]["unchecked"] == 0 and got[3]["score_success_threshold"] is None
    assert out.from_prior == 3


def _right(prompts, n):
    return [[str(2 * int(p.split("+")[0]))] * n for p in prompts]


def test_a_journal_from_before_top_k_and_stop_were_recorded_resumes_at_their_old_values(tmp_path):
    """A regression review: a journal written before stop 44 lacked top_k and stop, and no flag
    could match "unset": only --overwrite (losing the rows scored) got past it. Such a journal
    sampled at top_k 0 and no stop strings."""
    import pytest

    from passband.curriculum._journal import Journal
    from passband.curriculum.prescore import PrescoreError

    old = {"settings": {"model": "m", "temperature": "1.0", "top_p": "1.0", "max_tokens": "6"}}
    path = tmp_path / "out.jsonl.journal.jsonl"
    Journal(path, old).record([{"i": 0, "passes": 1, "trials": 4}])
    new = {"settings": {**old["settings"], "top_k": "0", "stop": "[]"}}
    assert 0 in Journal(path, new).done
    other = {"settings": {**old["settings"], "top_k": "5", "stop": "[]"}}
    with pytest.raises(PrescoreError, match=r"settings.top_k \"0\" there, \"5\" now"):
        Journal(path, other)
