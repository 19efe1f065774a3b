"""Every curriculum setting reachable (TOML ``[curriculum]``, Python), validated once with the
field, the value and the range; deprecated names; one success rule; the sampler seam."""

import warnings

import pytest

from passband.curriculum import Curriculum, CurriculumConfig
from passband.curriculum._success import describe_success_rule, with_success_rule
from passband.errors import ConfigError

BASE = '[model]\npath = "m"\n[data]\npath = "d.jsonl"\n'


def _load(tmp_path, text, overrides=()):
    from passband.config import load_config

    path = tmp_path / "run.toml"
    path.write_text(BASE + text)
    return load_config(path, list(overrides))


def test_toml_curriculum_section_reaches_every_field(tmp_path):
    cfg = _load(
        tmp_path,
        "[curriculum]\nband = [0.1, 0.9]\nwarmup_retest_share = 0.1\n"
        "success_threshold = 0.6\nprior_weight = 1.0\n",
        ["curriculum.cooldown_factor=0.5"],
    )
    cur = cfg.trainer.curriculum
    assert isinstance(cur, CurriculumConfig)
    assert (
        cur.band,
        cur.warmup_retest_share,
        cur.success_threshold,
        cur.prior_weight,
        cur.cooldown_factor,
    ) == ((0.1, 0.9), 0.1, 0.6, 1.0, 0.5)
    assert cfg.trainer.band == (0.1, 0.9)  # one band: the trainer reads the curriculum's
    assert cfg.trainer.to_dict()["curriculum"]["band"] == [0.1, 0.9]


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "warmup_retest_share = 1.5",
            r"\[curriculum\] CurriculumConfig.warmup_retest_share=1.5 is "
            r"outside the allowed range: a number in \[0, 1\]",
        ),
        (
            'prior_weight = "lots"',
            r"prior_weight='lots' is not a number \(a str\): expected a number in \[0, 1e\+06\]",
        ),
        ("success_threshold = true", r"success_threshold=True is not a number \(a bool\)"),
        ("success_threshold = nan", r"success_threshold=nan is outside the allowed range"),
        ("band = [0.8, 0.2]", r"band = \(0.8, 0.2\) is out of range: two numbers 0 <= low"),
        ("group_size = 8", r"the curriculum uses the run's group size; set \[trainer\] group_size"),
        ('band = "0.2"', r"CurriculumConfig.band = '0.2' is out of range: two numbers"),
        (
            'base_prior = "ab"',
            r"base_prior='ab' is outside the allowed range: two finite numbers > 0",
        ),
        (
            "base_prior = [1]",
            r"base_prior=\[1\] is outside the allowed range: two finite numbers > 0",
        ),
        ("bandd = [0.1, 0.2]", r"option\(s\) \['bandd'\]. Did you mean 'band'\? Valid: .*\bband, "),
        ('selection = "pool"', r"'selection' no longer exists: the 'pool' rule was removed"),
    ],
)
def test_toml_curriculum_mistakes_name_field_value_and_range(tmp_path, text, message):
    from passband.errors import UsageError

    with pytest.raises(UsageError, match=message):
        _load(tmp_path, f"[curriculum]\n{text}\n")


def test_old_names_are_deprecated_aliases(tmp_path):
    with pytest.warns(
        DeprecationWarning, match="'hard_retest_share' is deprecated; call it 'warmup_retest_share'"
    ):
        cfg = _load(tmp_path, "[curriculum]\nhard_retest_share = 0.1\nmax_hard_pool = 3\n")
    assert cfg.trainer.curriculum.warmup_retest_share == 0.1
    assert cfg.trainer.curriculum.max_warmup_pool == 3
    with pytest.warns(DeprecationWarning):
        assert Curriculum(range(3), hard_retest_after=7).config.warmup_retest_after == 7


def test_a_band_in_both_sections_is_refused_and_the_alias_warns_on_the_command_line(tmp_path):
    from passband.errors import UsageError

    with pytest.raises(UsageError, match=r"band is set in \[trainer\] .* and in \[curriculum\]"):
        _load(tmp_path, "[trainer]\nband = [0.3, 0.7]\n[curriculum]\nband = [0.2, 0.8]\n")
    import subprocess
    import sys

    path = tmp_path / "alias.toml"
    path.write_text(
        '[model]\npath = "m"\n[data]\npath = "d.jsonl"\n[curriculum]\nmax_hard_pool = 3\n'
    )
    (tmp_path / "d.jsonl").write_text('{"prompt": "p"}\n')
    code = "import sys; from passband.cli import main; sys.exit(main(sys.argv[1:]))"
    out = subprocess.run(  # a fresh interpreter: Python's own warning filters, as a user has them
        [sys.executable, "-c", code, "doctor", str(path)], capture_output=True, text=True
    )
    assert "'max_hard_pool' is deprecated; call it 'max_warmup_pool'" in out.stderr
    path.write_text('[model]\npath = "m"\n[data]\npath = "d.jsonl"\n[trainer]\nband = [0.3, 0.7]\n')
    out = subprocess.run(
        [sys.executable, "-c", code, "doctor", str(path)], capture_output=True, text=True
    )
    # the warning points at the user's file and line, not at a line of generated code
    assert f"{path}:6: DeprecationWarning: {path}: [trainer] band = [0.3, 0.7]" in out.stderr
    assert "<string>" not in out.stderr


def test_the_band_alias_in_a_file_becomes_the_curriculum_band(tmp_path):
    with pytest.warns(DeprecationWarning, match=r"\[trainer\] band = \[0.3, 0.7\] is deprecated"):
        cfg = _load(tmp_path, "[trainer]\nband = [0.3, 0.7]\n")
    assert cfg.trainer.curriculum.band == (0.3, 0.7) == cfg.trainer.band
    with pytest.warns(DeprecationWarning):  # an override is the same alias
        cfg = _load(tmp_path, "", ["trainer.band=[0.25, 0.75]"])
    assert cfg.trainer.curriculum.band == (0.25, 0.75)


def test_the_unknown_option_message_lists_what_a_file_may_set(tmp_path):
    with pytest.raises(ConfigError, match="unknown curriculum option") as info:
        _load(tmp_path, "[curriculum]\nbogus = 1\n")
    listed = str(info.value).split("Valid: ")[1].split(" (and")[0].split(", ")
    assert "band" in listed and "group_size_hint" not in listed


def test_an_unknown_keyword_is_a_config_error_listing_the_fields_everywhere(tmp_path):
    """``CurriculumConfig(bogus=1)`` was the dataclass's bare TypeError, and an unknown override
    on the command line named no valid key: both now say what may be set."""
    from passband.cli import main
    from passband.curriculum import CurriculumConfig

    with pytest.raises(ConfigError, match=r"\['bogus'\]\. Valid: band, success_threshold"):
        CurriculumConfig(bogus=1)
    with pytest.raises(TypeError):  # still what Python raises for an unknown keyword
        CurriculumConfig(bnd=(0.1, 0.9))
    run = tmp_path / "run.toml"
    run.write_text('[model]\npath = "m"\n[data]\npath = "d.jsonl"\n[reward]\nverifier = "exact"\n')
    for override, valid in (("trainer.bogus=1", "group_size"), ("curriculum.bogus=1", "band")):
        with pytest.raises(ConfigError, match=rf"override {override}.*Valid: .*{valid}"):
            from passband.config import load_config

            load_config(run, [override])
    assert main(["train", str(run), "trainer.bogus=1"]) == 2


def test_band_lives_in_one_place():
    from passband.trainer import GRPOConfig

    with pytest.warns(DeprecationWarning, match="trainer.band"):
        old = GRPOConfig(band=(0.3, 0.7))
    assert old.curriculum.band == (0.3, 0.7) == old.band
    new = GRPOConfig(curriculum={"band": (0.1, 0.6)})
    assert new.band == (0.1, 0.6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # copying a config is not using the deprecated field
        assert new.replace(seed=3).curriculum.band == (0.1, 0.6)
    with pytest.raises(ValueError, match="contradicts curriculum.band"):
        GRPOConfig(band=(0.3, 0.7), curriculum={"band": (0.1, 0.6)})
    with pytest.raises(ValueError, match="contradicts curriculum.band"):  # named, if default
        GRPOConfig(band=(0.3, 0.7), curriculum={"band": (0.2, 0.8)})
    from passband.curriculum import CurriculumConfig

    with pytest.raises(ValueError, match="contradicts curriculum.band"):  # or built by hand
        GRPOConfig(band=(0.3, 0.7), curriculum=CurriculumConfig())
    assert GRPOConfig(group_size=16).curriculum.group_size_hint == 16


def _shaped(completion, **_):
    return 0.7 if "good" in completion else 0.1


def test_one_success_rule_for_plain_numbers():
    checked = with_success_rule(_shaped, 0.5)
    assert checked("good").passed and checked("good").score == 0.7
    assert not checked("bad").passed and checked("bad").score == 0.1  # not "solved" any more
    assert not with_success_rule(_shaped, 0.8)("good").passed
    math = with_success_rule("math", 0.9)  # a verifier's verdicts decide, whatever the threshold
    assert math("\\boxed{4}", answer="4").passed and not math("\\boxed{5}", answer="4").passed
    assert "score >= success_threshold=0.5" in describe_success_rule(_shaped, 0.5)
    assert "verdict.passed (verifier 'math')" in describe_success_rule("math", 0.5)


def test_the_rule_reaches_inside_a_composed_reward_and_registered_verifiers(monkeypatch):
    """A shaped number wrapped in a Reward with a penalty, or registered under a name, still passes
    only at the threshold: a 0.1 must not read as "solved" because the total became a Verdict."""
    from passband.verifiers import Reward, overlong, register

    reward = Reward.from_verifier(_shaped, penalties=[overlong(max_length=200, cache=50)])
    checked = with_success_rule(reward, 0.5)
    assert not reward("bad").passed, "the plain coercion reads numbers at the default 0.5 too"
    assert not checked("bad").passed and checked("bad").score == reward("bad").score == 0.1
    assert with_success_rule(reward, 0.05)("bad").passed  # the run's threshold decides
    assert checked("good").passed and checked("good").components == reward("good").components
    assert "primary 'correct'" in describe_success_rule(reward, 0.5)
    from passband.verifiers import registry

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))  # the name leaves no trace
    register("test_shaped_rule")(_shaped)
    named = with_success_rule("test_shaped_rule", 0.5)
    assert not named("bad").passed and named("good").passed


def test_trainer_scorer_and_prescore_share_the_rule():
    import pickle

    from passband.curriculum import prescore
    from passband.trainer._scoring import Scorer

    scorer = Scorer(_shaped, success_threshold=0.5)
    verdicts = scorer(["good", "bad"], [{}, {}], [1, 1])
    assert [v.passed for v in verdicts] == [True, False] and "0.5" in scorer.success_rule
    pickle.dumps(with_success_rule(_shaped, 0.5))  # crosses into verifier worker processes

    def generate(prompts, n):
        return [["good"] * 2 + ["bad"] * 2 for _ in prompts]

    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = prescore(
            [{"prompt": "p"}],
            generate,
            _shaped,
            out_path=f"{tmp}/o.jsonl",
            k=4,
            adaptive=False,
            progress=False,
            workers=1,
        )
    row = out.rows[0]
    assert (row["passes"], row["trials"], row["score_success_threshold"]) == (2, 4, 0.5)
    assert "success_threshold=0.5" in out.summary()


def test_uniform_sampler_honours_exclude():
    import copy

    from passband.trainer.sampling import UniformSampler

    s = UniformSampler(range(10), seed=0)
    first = s.sample(4)
    next_up = copy.deepcopy(s).sample(1)[0]
    refill = s.sample(4, exclude=first + [next_up])
    assert not set(refill) & set(first + [next_up]) and len(set(refill)) == 4
    rest = s.sample(2)
    assert rest[0] == next_up  # skipped, not lost: it is next in line
    assert sorted(first + refill + rest) == list(range(10))  # still one epoch, no repeats
    assert len(s.sample(3, exclude=range(10))) == 3  # everything excluded: repeats, no hang


def test_any_object_with_the_interface_is_a_sampler():
    from passband.trainer.sampling import check_sampler

    cur = Curriculum(range(3))
    assert check_sampler(cur) is cur

    class Half:
        def sample(self, n, exclude=()):
            return [0] * n

    from passband.errors import ConfigError

    with pytest.raises(ConfigError, match="lacks observe, state_dict, load_state_dict, metrics"):
        check_sampler(Half())


def test_a_negative_success_threshold_serves_rewards_below_zero(tmp_path):
    """A reward on [-1, 0] (0 when right) needs a threshold below 0; it was refused (>= 0 only),
    so every answer of such a reward counted as a failure."""
    from passband.curriculum.prescore_config import PrescoreConfig
    from passband.errors import ConfigError

    cfg = _load(tmp_path, "[curriculum]\nsuccess_threshold = -0.5\n")
    assert cfg.trainer.curriculum.success_threshold == -0.5
    assert PrescoreConfig(success_threshold=-0.5).success_threshold == -0.5
    with pytest.raises(ConfigError, match="band"):  # a ConfigError (a ValueError) like the rest
        CurriculumConfig(band=(0.9, 0.1))


def test_decides_by_verdict_only_for_verifiers_that_declare_it():
    from passband.curriculum._success import decides_by_verdict, with_success_rule
    from passband.verifiers import Reward, get, names

    builtins = ["code", "exact", "format", "json_schema", "math", "regex"]
    assert set(builtins) <= set(names())
    assert all(decides_by_verdict(n) and decides_by_verdict(get(n)) for n in builtins)
    assert decides_by_verdict(with_success_rule("math", 0.5))
    assert decides_by_verdict(Reward({"correct": "math", "shaped": _shaped}))
    assert not decides_by_verdict(Reward({"shaped": _shaped, "correct": "math"}))  # primary: first
    assert not decides_by_verdict(_shaped) and not decides_by_verdict(None)
    assert not decides_by_verdict("no such verifier")


def test_the_logged_success_rule_names_the_threshold_only_where_it_can_decide():
    from passband.curriculum._success import describe_success_rule

    assert describe_success_rule("math", 0.5) == "success = verdict.passed (verifier 'math')"
    assert "success_threshold=0.7" in describe_success_rule(_shaped, 0.7)
