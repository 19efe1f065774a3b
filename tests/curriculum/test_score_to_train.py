"""`passband score` -> `passband train` on the scored file, with a real tiny model: the pre-scores
must reach the curriculum (printed at start, ``curriculum/priors/used``, no prompt left unseen)."""

import json

import pytest

from passband.cli import main
from passband.curriculum import read_rows, write_rows
from passband.verifiers import Reward


def _run_toml(tmp_path, model, data, out, extra=""):
    path = tmp_path / f"{out}.toml"
    path.write_text(
        f'[model]\npath = "{model}"\n[data]\npath = "{data}"\n'
        '[reward]\nverifier = "regex"\nreferences = {pattern = "pattern"}\n'
        f"[trainer]\nmax_steps = 1\ngroup_size = 4\nprompts_per_step = 4\n"
        f"max_new_tokens = 6\nmax_refill_rounds = 0\nprogress = false\n"
        f'output_dir = "{tmp_path / out}"\nlearning_rate = 1e-5\n{extra}'
    )
    return path


@pytest.mark.slow
def test_scored_file_priors_are_used_by_train(tiny_model, score_flags, tmp_path, capsys):
    model = tiny_model
    patterns = [".*", ".*[0-9].*", "x.*", ".*[aeiou].*", "[a-m ]*", ".*z.*"]
    rows = [{"prompt": f"what is {i}+{i}?", "pattern": p} for i, p in enumerate(patterns * 2)]
    write_rows(rows, tmp_path / "data.jsonl")
    scored = tmp_path / "scored.jsonl"
    assert (
        main(
            [
                "score",
                str(tmp_path / "data.jsonl"),
                "--model",
                str(model),
                "--verifier",
                "regex",
                "--ref",
                "pattern=pattern",
                "--out",
                str(scored),
                *score_flags,
            ]
        )
        == 0
    )
    assert "success = verdict.passed" in capsys.readouterr().out
    assert all(r["trials"] for r in read_rows(scored))
    # regex gives verdicts: the success threshold decided nothing, so none is recorded
    assert all(r["score_success_threshold"] is None for r in read_rows(scored))
    assert all(r["score_verifier"] == "regex" for r in read_rows(scored))

    # the same settings as scoring (temperature 1.0, 6 tokens, same model): full weight
    assert main(["train", str(_run_toml(tmp_path, model, scored, "with"))]) == 0
    printed = capsys.readouterr().out
    assert "curriculum: priors for 12 of 12 prompts (passes/trials: 12)" in printed
    assert "other settings" not in printed
    first = json.loads((tmp_path / "with" / "metrics.jsonl").read_text().splitlines()[0])
    assert first["curriculum/priors/used"] == 12 and first["curriculum/pool/fresh"] == 0
    easy = [i for i, r in enumerate(rows) if r["pattern"] == ".*"]  # every answer passes
    drawn = [
        json.loads(line)["prompt_id"]
        for line in (tmp_path / "with" / "groups.jsonl").read_text().splitlines()
    ]
    assert not set(easy) & set(drawn)  # known too easy before any rollout: not drawn

    # the raw file has no pre-scores: nothing to use, and the first draw is all fresh
    assert main(["train", str(_run_toml(tmp_path, model, tmp_path / "data.jsonl", "without"))]) == 0
    assert "no pre-scores in the data" in capsys.readouterr().out
    first = json.loads((tmp_path / "without" / "metrics.jsonl").read_text().splitlines()[0])
    assert first["curriculum/priors/used"] == 0 and first["curriculum/pool/fresh"] == 8

    # scored at another temperature than the run trains at: used, at a lower weight, and said so
    assert (
        main(["train", str(_run_toml(tmp_path, model, scored, "hot", "temperature = 0.7\n"))]) == 0
    )
    assert (
        "x0.25 for 12 scored with other settings (temperature 1.0 vs 0.7)"
        in capsys.readouterr().out
    )
    # another success threshold: regex passes on its verdicts, so the counts mean the same
    extra = "[curriculum]\nsuccess_threshold = 0.8\n"
    assert main(["train", str(_run_toml(tmp_path, model, scored, "strict", extra))]) == 0
    printed = capsys.readouterr().out
    assert "priors for 12 of 12" in printed and "other settings" not in printed


@pytest.mark.slow
def test_train_names_scores_made_on_another_prompt(tiny_model, score_flags, tmp_path, capsys):
    """``passband score --prompt-template`` asked other prompts than the run asks; ``passband
    train`` used the scores in full, and said nothing. With the template in [data] they match."""
    patterns = [".*", ".*[0-9].*", "x.*", ".*[aeiou].*"]
    write_rows(
        [{"prompt": f"{i}+{i}?", "pattern": p} for i, p in enumerate(patterns)],
        tmp_path / "d.jsonl",
    )
    scored = tmp_path / "scored.parquet"
    argv = ["score", str(tmp_path / "d.jsonl"), "--model", str(tiny_model), "--verifier", "regex"]
    argv += ["--ref", "pattern=pattern", "--prompt-template", "{prompt} {prompt}"]
    assert main([*argv, "--out", str(scored), *score_flags]) == 0
    assert main(["train", str(_run_toml(tmp_path, tiny_model, scored, "raw"))]) == 0
    assert (
        "x0.25 for 4 scored with other settings (prompt (scored as the template "
        "'{prompt} {prompt}' builds it; training asks another))" in capsys.readouterr().out
    )
    toml = _run_toml(tmp_path, tiny_model, scored, "same")
    toml.write_text(
        toml.read_text().replace("[reward]", 'prompt_template = "{prompt} {prompt}"\n[reward]')
    )
    assert main(["train", str(toml)]) == 0
    printed = capsys.readouterr().out
    assert "priors for 4 of 4" in printed and "other settings" not in printed


def _shaped(completion, **_):
    return 0.7 if "good" in completion else 0.1


@pytest.mark.parametrize(
    "reward, recorded, mismatched",
    [
        (_shaped, 0.5, True),  # plain numbers under another threshold: discounted, and named
        (_shaped, 0.8, False),
        ("regex", 0.5, False),  # verdicts: the threshold decides nothing
        (None, 0.5, True),  # not known: compared, as before
    ],
)
def test_a_success_threshold_mismatch_counts_only_where_numbers_are_thresholded(
    reward, recorded, mismatched
):
    from passband.trainer import GRPOConfig
    from passband.trainer.sampling import make_sampler

    config = GRPOConfig(group_size=4, prompts_per_step=2, curriculum={"success_threshold": 0.8})
    rows = [
        {"prompt": f"q{i}", "passes": 2, "trials": 4, "score_success_threshold": recorded}
        for i in range(4)
    ]
    lines: list[str] = []
    sampler = make_sampler(rows, config, log=lines.append, reward=reward)
    assert sampler.metrics()["priors/used"] == 4
    said = "\n".join(lines)
    assert ("other settings (success_threshold 0.5 vs 0.8)" in said) == mismatched, said


@pytest.mark.slow
def test_grpo_trainer_takes_priors_or_any_sampler(tiny_model, tmp_path, capsys):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from passband.trainer import GRPOConfig, GRPOTrainer
    from passband.trainer.sampling import Sampler

    rows = [{"prompt": f"q{i}?", "pattern": ".*"} for i in range(6)]
    config = GRPOConfig(
        max_steps=1,
        group_size=2,
        prompts_per_step=2,
        max_new_tokens=2,
        max_refill_rounds=0,
        progress=False,
        output_dir=str(tmp_path / "a"),
        learning_rate=1e-5,
        curriculum={"prior_weight": 1.0},
    )
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    tok = AutoTokenizer.from_pretrained(tiny_model)
    trainer = GRPOTrainer(model, tok, rows, "regex", config, priors={0: (8, 8), 1: (0, 8)})
    assert "priors for 2 of 6 prompts (given to GRPOTrainer)" in capsys.readouterr().out
    scored = [{**row, "passes": 1, "trials": 4} for row in rows[:4]] + rows[4:]
    GRPOTrainer(
        model,
        tok,
        scored,
        "regex",
        config.replace(output_dir=str(tmp_path / "p")),
        priors={0: (8, 8)},
    )
    # the rows' own pre-scores were dropped without a word
    assert (
        "the pre-scores of 4 rows are not used (priors= replaces them)" in capsys.readouterr().out
    )
    assert trainer.sampler.classify(0) == "too_easy" and trainer.sampler.classify(1) == "too_hard"
    # keys that name no prompt position are counted as such, not reported as priors; once, in
    # the start line (a warning said the same again)
    import warnings

    from passband.errors import ConfigError

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        GRPOTrainer(
            model,
            tok,
            rows,
            "regex",
            config.replace(output_dir=str(tmp_path / "k")),
            priors={99: (1, 4), 7: (2, 4), 2: (1, 4)},
        )
    printed = capsys.readouterr().out
    assert "priors for 1 of 6 prompts" in printed and "2 of the 3 keys match no prompt" in printed
    assert "e.g. 99" in printed
    # not one key matching is a mistake: the run would train with no priors at all
    with pytest.raises(ConfigError, match=r"priors= 1 of the 1 keys .* e.g. '0' \(a string: pos"):
        GRPOTrainer(  # keys read from JSON are strings: the error says so
            model,
            tok,
            rows,
            "regex",
            config.replace(output_dir=str(tmp_path / "s")),
            priors={"0": (1, 4)},
        )
    assert not [w for w in caught if "match no prompt" in str(w.message)], caught

    class Fixed(Sampler):  # the seam: a user's own sampler, nothing else required
        def __init__(self):
            self.seen = []

        def sample(self, n, exclude=()):
            return [5] * n

        def observe(self, prompt_id, successes, trials):
            self.seen.append((prompt_id, successes, trials))

        def state_dict(self):
            return {"seen": self.seen}

        def load_state_dict(self, state):
            self.seen = list(state["seen"])

    mine = Fixed()
    other = GRPOTrainer(
        model, tok, rows, "regex", config.replace(output_dir=str(tmp_path / "b")), sampler=mine
    )
    other.train()
    with pytest.raises(ValueError, match="priors= or sampler=, not both"):  # never dropped silently
        GRPOTrainer(model, tok, rows, "regex", config, sampler=Fixed(), priors={0: (1, 2)})
    assert (
        other.sampler is mine
        and "sampler: Fixed, given to GRPOTrainer" in capsys.readouterr().out
        and [s[0] for s in mine.seen] == [5, 5]
    )
    assert all(s == t == 2 for _, s, t in mine.seen)  # ".*" always passes: 2 of 2

    class Empty(Fixed):  # draws nothing: the run would "finish" with nothing trained
        def sample(self, n, exclude=()):
            return []

    empty = GRPOTrainer(
        model, tok, rows, "regex", config.replace(output_dir=str(tmp_path / "e")), sampler=Empty()
    )
    with pytest.raises(ValueError, match=r"sampler Empty.sample\(2\) drew no prompt ids"):
        empty.train()


def test_rows_with_different_columns_each_get_their_own_prior():
    """Rows of one dataset may differ in columns (a partly scored file): the check of which
    columns carry a difficulty, done once per set of columns, must not leak between them."""
    from passband.curriculum._priors import training_priors

    rows = [
        {"prompt": "a"},
        {"prompt": "b", "passes": 3, "trials": 4},
        {"passes": 1, "prompt": "c", "trials": 4},  # the same columns in another order
        {"prompt": "d"},
        {"prompt": "e", "gsm8k_solve_rate": 0.25},
        {"prompt": "f", "pass_rate": 0.5},
        {"prompt": "g", "passes": None, "trials": None},  # columns present, no values
        {"prompt": "h", "pass_rate": 0.25, "trials": 4},  # a rate and its sample size
    ]
    found = training_priors(rows, prior_trials=8)
    assert found.priors == {1: (3, 4), 2: (1, 4), 4: (2.0, 8), 5: (4.0, 8), 7: (2.0, 8)}
    assert found.sources == {"passes/trials": 2, "*_solve_rate": 1, "pass_rate": 2}
    # nothing records how these were sampled: the line says they count as this run's, and
    # what a bare rate stands for (it said only "counts weighted x0.5")
    line = found.summary(0.5, 0.5)
    assert "5 record no sampling settings" in line and "count as scored by this run" in line
    assert "a rate counts as 8 trials" in line
    scored = [{**r, "score_model": "m", "score_temperature": 1.0} for r in rows]
    assert "record no sampling settings" not in training_priors(scored).summary(0.5, 0.5)


@pytest.mark.parametrize(
    "cells, said",
    [
        ({"passes": 9, "trials": 8}, "'passes' = 9 with 'trials' = 8"),
        ({"passes": -1, "trials": 8}, "'passes' = -1"),
        ({"passes": 3}, "'passes' = 3 but 'trials' is missing or empty"),
        ({"trials": 8}, "'trials' = 8 but 'passes' is missing or empty"),  # was read as unscored
        ({"passes": "3/8", "trials": 8}, "column 'passes' holds '3/8'"),
        ({"pass_rate": 1.5}, "column 'pass_rate' holds 1.5; expected a rate in [0, 1]"),
        ({"pass_rate": "hard"}, "column 'pass_rate' holds 'hard'"),
        ({"pass_rate": float("inf")}, "column 'pass_rate' holds inf"),
        ({"math_solve_rate": 50}, "column 'math_solve_rate' holds 50"),
    ],
)
def test_an_unusable_difficulty_cell_is_refused_not_read_as_unscored(cells, said):
    """A bad count or rate used to be dropped as if the row were unscored: the trainer said "no
    pre-scores in the data" and trained without the priors. It names the row and the cell now;
    empty cells still mean unscored."""
    from passband.curriculum._priors import training_priors
    from passband.curriculum.prescore import priors_from_rows
    from passband.errors import DataError

    rows = [{"prompt": "a", "pass_rate": ""}, {"prompt": "b", **cells}, {"prompt": "c"}]
    with pytest.raises(DataError, match="1 of 3 training rows") as info:
        training_priors(rows)
    assert "row 1: " + said in str(info.value)
    with pytest.raises(DataError, match="row 1"):
        priors_from_rows(rows)
    assert training_priors([rows[0], rows[2]]).priors == {}  # empty cells: unscored, no error
    # with rows skipped as unusable (dataset rows 0 and 3 kept), the dataset's row is named
    with pytest.raises(DataError, match=r"1 of 2 kept training rows .*row 3: "):
        training_priors([rows[0], rows[1]], positions=[0, 3])


def test_a_row_scoring_got_no_verdict_for_trains_unscored():
    """``passband score`` writes 0 passes in 0 trials (band class ``unscored``) for a row whose
    answers all errored or timed out; training on that file must read it as unscored, not stop."""
    from passband.curriculum._priors import training_priors
    from passband.curriculum.prescore import PrescoreConfig, _output_row, priors_from_rows

    cfg = PrescoreConfig(settings={"model": "m"})
    rows = [
        _output_row({"prompt": "a"}, None, {"passes": 0, "trials": 0, "unchecked": 8}, cfg),
        _output_row({"prompt": "b"}, None, {"passes": 3, "trials": 8, "unchecked": 0}, cfg),
    ]
    assert rows[0]["band_class"] == "unscored" and rows[0]["trials"] == 0
    found = training_priors(rows, {"model": "m"})
    assert found.priors == {1: (3, 8)} and found.sources == {"passes/trials": 1}
    assert priors_from_rows(rows) == {1: (3, 8)}


def _checks_only_marked(completion, answer=None, **_):
    """Can check only answers marked with '!'; the others error, as sandbox timeouts do."""
    from passband.verifiers import Verdict

    if not completion.startswith("!"):
        return Verdict(0.0, "error", "could not run")
    return Verdict(float(completion[1:] == answer), "ok" if completion[1:] == answer else "wrong")


_checks_only_marked.returns_verdict = True


def test_unchecked_answers_are_not_read_as_an_early_stop(tmp_path):
    """All 8 answers were sampled and 2 could be checked: the prior is 2 of 2, not the 8 of 8 of
    a row adaptive scoring stopped after agreeing answers (which 'stop' still gets its k)."""
    from passband.curriculum import prescore
    from passband.curriculum._priors import training_priors

    def generate(prompts, n):  # one checkable (right) answer per round, the rest unchecked
        return [["!4"] + ["x"] * (n - 1) if p == "2+2=" else ["!6"] * n for p in prompts]

    rows = [{"prompt": "2+2=", "answer": "4"}, {"prompt": "3+3=", "answer": "6"}]
    out = prescore(
        rows, generate, _checks_only_marked, out_path=tmp_path / "s.jsonl", progress=False, k=8
    ).rows
    assert [(r["passes"], r["trials"], r["unchecked"]) for r in out] == [(2, 2, 6), (4, 4, 0)]
    found = training_priors(out, {})
    assert found.priors == {0: (2, 2), 1: (8, 8)}  # the second stopped early: its k counts


def test_uniform_sampling_says_what_of_the_data_and_config_it_leaves_unused():
    """``use_curriculum = false`` on a scored file with a ``[curriculum]`` section used to drop
    both without a word."""
    from passband.trainer import GRPOConfig
    from passband.trainer.sampling import UniformSampler, make_sampler

    rows = [
        {"prompt": "a", "passes": 1, "trials": 4},
        {"prompt": "b", "passes": 0, "trials": 0},  # scoring got no verdict: no pre-score
        {"prompt": "c", "pass_rate": None},
    ]
    said = []
    off = GRPOConfig(
        use_curriculum=False, pretrained=False, curriculum={"band": (0.3, 0.7)}, prompts_per_step=2
    )
    assert isinstance(make_sampler(rows, off, log=said.append), UniformSampler)
    assert said == [
        "sampling: uniform passes over the data (use_curriculum = false); the pre-scores of 1 "
        "rows are not used; curriculum settings not used: band"
    ]
    said.clear()
    plain = GRPOConfig(use_curriculum=False, pretrained=False, prompts_per_step=2)
    make_sampler(rows[1:], plain, log=said.append)
    assert said == ["sampling: uniform passes over the data (use_curriculum = false)"]


def test_train_names_the_data_file_of_an_unusable_row(tiny_model, tmp_path, capsys):
    """The trainer's "row 1: the prompt is null" named no file; the CLI adds the data path."""
    rows = [{"prompt": "what is 1+1?", "pattern": ".*"}, {"prompt": None, "pattern": ".*"}]
    write_rows(rows, tmp_path / "data.jsonl")
    assert main(["train", str(_run_toml(tmp_path, tiny_model, tmp_path / "data.jsonl", "r"))]) == 2
    err = capsys.readouterr().err
    assert f"[data] {tmp_path / 'data.jsonl'} (rows counted from 0): 1 of 2 training rows" in err
    assert "row 1: the prompt is null" in err
    # the prompt read from [data] prompt_column: that column is named, not only 'prompt'
    rows = [{"question": "what is 1+1?", "pattern": ".*"}, {"question": None, "pattern": ".*"}]
    write_rows(rows, tmp_path / "q.jsonl")
    cfg = _run_toml(tmp_path, tiny_model, tmp_path / "q.jsonl", "q")
    cfg.write_text(cfg.read_text().replace('q.jsonl"\n', 'q.jsonl"\nprompt_column = "question"\n'))
    assert main(["train", str(cfg)]) == 2
    assert (
        "row 1: the prompt is null (no 'prompt' or 'messages' value; null in this row: "
        "'question')" in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    "priors, words",
    [
        ({0: (5, 4)}, "prior for 0: passes=5.0 not in [0, trials=4.0]"),
        ({1: float("nan")}, "prior for 1: nan is not finite"),
        ({2: "x"}, "prior for 2 must be (passes, trials) or a pass rate, got 'x'"),
        ([(1, 2)], "priors= is a list, not a dict"),
    ],
)
def test_a_bad_prior_is_a_config_error_before_the_model_loads(tmp_path, priors, words):
    """The model path does not exist: the prior is refused first, as passband's own error (it was
    a plain ValueError from inside the curriculum, after the model had loaded)."""
    from passband.errors import ConfigError
    from passband.trainer import GRPOConfig, GRPOTrainer

    with pytest.raises(ConfigError) as info:
        GRPOTrainer(
            str(tmp_path / "no_model"),
            None,
            [{"prompt": "a", "answer": "b"}],
            "exact",
            GRPOConfig(output_dir=str(tmp_path / "run"), verifier_workers=1),
            priors=priors,
        )
    assert words in str(info.value) and "no_model" not in str(info.value)


@pytest.mark.parametrize("counts", [(2, 0), (-3, -5), (5, -1), (0, -8)])
def test_curriculum_priors_without_trials_are_refused_by_name(counts):
    """``Curriculum(priors=...)`` refuses counts with no trials but passes, or negative trials,
    naming the prompt, as ``passband train`` refuses such a row; (0, 0) is an unscored prompt."""
    from passband.curriculum import Curriculum
    from passband.errors import DataError

    with pytest.raises(DataError, match=r"prior for 3: .* needs trials > 0"):
        Curriculum(range(10), priors={3: counts})
    assert Curriculum(range(10), priors={3: (0, 0)}).metrics()["priors/used"] == 0


@pytest.mark.parametrize("rate", [1.5, -0.5, 2])
def test_a_bare_pass_rate_out_of_range_is_refused_as_a_rate(rate):
    """A bare rate of 1.5 was reported as ``passes=12.0 not in [0, trials=8.0]``: a count the user
    never gave, made of the rate by ``group_size_hint``."""
    from passband.curriculum import Curriculum
    from passband.errors import DataError

    with pytest.raises(DataError) as info:
        Curriculum(range(3), priors={0: rate})
    said = str(info.value)
    assert f"prior for 0: the pass rate {rate!r} must be in [0, 1]" in said, said
    assert "passes=" not in said
    assert Curriculum(range(3), priors={0: 1.0, 1: 0}).metrics()["priors/used"] == 2


def test_curriculum_priors_whose_keys_match_no_id_are_warned_about():
    """Priors read from JSON have string keys; ids that are ints match none of them. The bare
    ``Curriculum`` says so, with an example of each, instead of dropping them silently."""
    from passband.curriculum import Curriculum

    with pytest.warns(UserWarning, match=r"1 of the 2 prior keys match no prompt id .*'0'.*like 0"):
        cur = Curriculum(range(10), priors={"0": (2, 8), 1: (2, 8)})
    assert cur.metrics()["priors/unused"] == 1 and cur.metrics()["priors/used"] == 1


@pytest.mark.parametrize(
    "reward, mismatched",
    [
        ("math", False),
        (Reward({"correct": "math", "form": ("format", 0.1)}), False),  # its primary decides
        ("exact", True),
        (_shaped, True),
    ],
)
def test_pre_scores_made_with_another_verifier_are_discounted_and_named(reward, mismatched):
    """Scores of one verifier said nothing about a run rewarded by another, yet counted fully."""
    from passband.trainer import GRPOConfig
    from passband.trainer.sampling import make_sampler

    rows = [
        {"prompt": f"q{i}", "passes": 2, "trials": 4, "score_verifier": "math"} for i in range(4)
    ]
    lines: list[str] = []
    make_sampler(
        rows, GRPOConfig(group_size=4, prompts_per_step=2), log=lines.append, reward=reward
    )
    said = "\n".join(lines)
    assert ("other settings (verifier 'math' vs" in said) == mismatched, said


@pytest.mark.parametrize(
    "top_k, stop, named",
    [
        (0, [], ""),
        (0, "[]", ""),  # read back from a CSV cell
        (1, ["3"], "top_k 1 vs 0, stop ['3'] vs []"),
        (0, '["3"]', "stop ['3'] vs []"),
        (None, None, ""),  # scored before these were recorded: nothing to compare
    ],
)
def test_pre_scores_made_at_another_top_k_or_stop_are_discounted_and_named(top_k, stop, named):
    """Training compared temperature and top_p, but not top_k and stop, which change what is
    sampled as much: scores made at top_k = 1 counted in full for a run sampling the whole
    distribution."""
    from passband.trainer import GRPOConfig
    from passband.trainer.sampling import make_sampler

    rows = [
        {"prompt": f"q{i}", "passes": 2, "trials": 4, "score_top_k": top_k, "score_stop": stop}
        for i in range(4)
    ]
    lines: list[str] = []
    sampler = make_sampler(rows, GRPOConfig(group_size=4, prompts_per_step=2), log=lines.append)
    said = "\n".join(lines)
    assert ("other settings" in said) == bool(named), said
    if named:
        assert f"x0.25 for 4 scored with other settings ({named})" in said, said
    assert sampler.metrics()["priors/used"] == 4
    config = GRPOConfig(group_size=4, prompts_per_step=2, top_k=1, stop=("3",))
    lines.clear()
    make_sampler(rows, config, log=lines.append)
    assert ("other settings" in "\n".join(lines)) == (top_k is not None and top_k != 1)


def _says_four(prompts, n):
    return [["4"] * n for _ in prompts]


@pytest.mark.parametrize("out", ["s.jsonl", "s.parquet", "s.csv"])
def test_pre_scores_made_on_another_prompt_are_discounted_and_named(tmp_path, out):
    """Scores made with ``--prompt-template`` (or another prompt column) were used in full by a
    run asking the raw prompts: nothing recorded what the model had been asked."""
    from passband.curriculum import prescore, read_rows
    from passband.trainer import GRPOConfig
    from passband.trainer.sampling import make_sampler

    rows = [{"prompt": f"{i}+{4 - i}=", "answer": "4"} for i in range(4)]
    config = GRPOConfig(group_size=4, prompts_per_step=2)
    said = {}
    for template in (None, "{prompt}{prompt}", "{prompt}"):
        path = tmp_path / f"{template is None}-{len(template or '')}-{out}"
        prescore(rows, _says_four, "exact", out_path=path, progress=False, prompt_template=template)
        scored = read_rows(path)
        assert all((r["score_prompt_template"] or None) == template for r in scored)  # CSV: ""
        lines: list[str] = []
        assert make_sampler(scored, config, log=lines.append).metrics()["priors/used"] == 4
        said[template] = "\n".join(lines)
    assert "other settings" not in said[None] and "other settings" not in said["{prompt}"]
    assert (
        "x0.25 for 4 scored with other settings (prompt (scored as the template "
        "'{prompt}{prompt}' builds it; training asks another))" in said["{prompt}{prompt}"]
    ), said
    # the same rows trained with that template ([data] prompt_template builds 'prompt'): the same
    doubled = [
        {**r, "prompt": r["prompt"] * 2} for r in read_rows(path.with_name(f"False-16-{out}"))
    ]
    lines = []
    make_sampler(doubled, config, log=lines.append)
    assert "other settings" not in "\n".join(lines)


@pytest.mark.parametrize("out", ["chat.parquet", "chat.csv"])
def test_chat_messages_scored_are_the_ones_training_asks_after_a_round_trip(tmp_path, out):
    """Parquet gives every message every key another one has (None where it had none), CSV
    writes them as JSON text: the same messages, which must not read as another prompt (a CSV's
    were asked as their JSON text, by training and by a second scoring)."""
    from passband.curriculum import prescore, read_rows
    from passband.trainer import GRPOConfig
    from passband.trainer.sampling import make_sampler

    chat = [
        {"role": "system", "content": "be brief", "name": "rules"},
        {"role": "user", "content": "2+2="},
        {"role": "assistant", "content": "4"},  # the SFT answer: not asked
    ]
    rows = [{"messages": chat, "answer": "4"} for _ in range(3)]
    path = tmp_path / out
    prescore(rows, _says_four, "exact", out_path=path, progress=False, messages_column="messages")
    scored = read_rows(path)
    if out.endswith(".parquet"):
        assert scored[0]["messages"][1]["name"] is None  # what Parquet made of it
    else:
        assert isinstance(scored[0]["messages"], str)  # what CSV made of it
        asked: list = []
        prescore(
            scored,
            lambda prompts, n: asked.extend(prompts) or _says_four(prompts, n),
            "exact",
            out_path=tmp_path / "again.jsonl",
            progress=False,
            messages_column="messages",
            rescore=True,
        )
        assert asked and all(p == chat[:2] for p in asked), asked[:1]
    lines: list[str] = []
    make_sampler(scored, GRPOConfig(group_size=4, prompts_per_step=2), log=lines.append)
    assert "priors for 3 of 3" in lines[0] and "other settings" not in lines[0], lines


def test_the_trainer_tells_the_curriculum_how_long_the_run_is():
    """``spaced_reuse`` binds only where the in-band walk is longer than the run has left: the
    trainer gives its rollout budget, ``max_steps x prompts_per_step x max_oversample``, unless
    the user set ``run_groups``."""
    from passband.trainer import GRPOConfig
    from passband.trainer.sampling import make_sampler

    rows = [{"prompt": f"p{i}"} for i in range(10)]
    config = GRPOConfig(pretrained=False, max_steps=30, prompts_per_step=8, max_oversample=1.25)
    assert make_sampler(rows, config, log=lambda _: None).config.run_groups == 300
    mine = GRPOConfig(pretrained=False, curriculum={"run_groups": 77})
    assert make_sampler(rows, mine, log=lambda _: None).config.run_groups == 77


def test_a_group_with_no_checkable_answer_is_reported_as_unscored():
    """GRPOTrainer's seam: ``observe`` with the checkable answers, else the sampler's optional
    ``unscored``; a sampler without it (``UniformSampler``, a user's) is left alone."""
    from passband.trainer._sampler_api import observe_group
    from passband.trainer.sampling import UniformSampler

    class Recorder:
        def __init__(self):
            self.calls = []

        def observe(self, pid, passes, trials):
            self.calls.append(("observe", pid, passes, trials))

        def unscored(self, pid):
            self.calls.append(("unscored", pid))

    rec = Recorder()
    observe_group(rec, "a", 2, 8)
    observe_group(rec, "b", 0, 0)
    assert rec.calls == [("observe", "a", 2, 8), ("unscored", "b")]
    uniform = UniformSampler([0, 1], seed=0)
    observe_group(uniform, 0, 0, 0)  # the interface's no-op
    assert uniform.metrics() == UniformSampler([0, 1], seed=0).metrics()

    class Plain:  # a user's sampler without the optional method, or with a field of that name
        unscored = {"not", "a", "method"}

        def observe(self, *args):
            raise AssertionError("a group with no checkable answer is not observed")

    observe_group(Plain(), "b", 0, 0)
    del Plain.unscored
    observe_group(Plain(), "b", 0, 0)


@pytest.mark.parametrize(
    ("cells", "named"),
    [
        ({"score_top_k": float("nan"), "score_stop": float("nan")}, None),  # pandas' empty cells
        ({"score_top_k": 0, "score_stop": ["b", "a", "a"]}, None),  # order and repeats: the same
        ({"score_top_k": 0, "score_stop": '["a", "b"]'}, None),
        ({"score_top_k": 0, "score_stop": ["c"]}, "stop"),
    ],
)
def test_empty_cells_and_the_order_of_stop_strings_are_no_other_settings(cells, named):
    """A regression review: NaN cells (a file read through pandas) crashed the trainer or read as
    another top_k, and stop strings in another order halved every prior."""
    from passband.trainer import GRPOConfig
    from passband.trainer.sampling import make_sampler

    rows = [{"prompt": f"q{i}", "passes": 2, "trials": 4, **cells} for i in range(4)]
    lines: list[str] = []
    config = GRPOConfig(group_size=4, prompts_per_step=2, stop=("a", "b"))
    assert make_sampler(rows, config, log=lines.append).metrics()["priors/used"] == 4
    said = "\n".join(lines)
    assert ("other settings" in said) == (named is not None), said


def test_scores_from_before_the_prompt_record_say_what_was_not_compared():
    """A regression review: a scored file from before stop 44 got full weight with the same line
    as a perfect match, though its prompt, top_k and stop could not be compared."""
    from passband.trainer import GRPOConfig
    from passband.trainer.sampling import make_sampler

    old = {"score_model": "m", "score_temperature": 1.0, "score_max_tokens": 64}
    rows = [{"prompt": f"q{i}", "passes": 2, "trials": 4, **old} for i in range(3)]
    lines: list[str] = []
    make_sampler(rows, GRPOConfig(group_size=4, prompts_per_step=2), log=lines.append)
    assert "3 predate the record of the prompt, top_k and stop" in lines[0], lines
