"""GRPOConfig validation and warnings; TOML run configs with overrides (passband.config)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from passband.cli import main
from passband.config import load_config, load_rows, parse_overrides
from passband.errors import UsageError
from passband.trainer.config import RECOMMENDED, GRPOConfig, check_recommended

# shared/ sits beside the checkout (the development machine and CI both clone the repository
# into another folder with shared/ next to it), so the path is found from this file, not fixed.
REPO = Path(__file__).resolve().parents[2]
GSM8K = REPO.parent / "shared" / "data" / "gsm8k"
needs_gsm8k = pytest.mark.skipif(
    not (GSM8K / "train.jsonl").is_file(),
    reason=f"GSM8K not found: expected {GSM8K / 'train.jsonl'} "
    "(shared/data/gsm8k beside the repository checkout)",
)


@pytest.mark.parametrize(
    "changes, words",
    [
        ({"group_size": 1}, ["group_size", "1", ">= 2"]),
        ({"group_size": 0}, ["group_size", "0", "integer >= 2"]),
        ({"temperature": 0.0}, ["temperature", "0.0", "> 0"]),
        ({"top_p": 1.5}, ["top_p", "1.5"]),
        ({"clip_low": 1.2}, ["clip_low", "1.2"]),
        ({"loss_aggregation": "sum"}, ["loss_aggregation", "'sum'", "token_mean"]),
        ({"advantage": "rloo"}, ["advantage", "no_std"]),
        ({"band": (0.8, 0.2)}, ["band", "low < high"]),
        ({"max_steps": 0}, ["max_steps", "0", ">= 1"]),
        ({"prompts_per_step": 2.5}, ["prompts_per_step", "2.5", "integer"]),
        ({"verifier_workers": 0}, ["verifier_workers"]),
    ],
)
def test_bad_values_raise_naming_field_value_and_range(changes, words):
    with pytest.raises(ValueError) as info:
        GRPOConfig(**changes)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize(
    "changes, field, risk",
    [
        ({"group_size": 2}, "group_size", "zero reward variance"),
        ({"beta": 0.05}, "beta", "reference"),
        ({"temperature": 0.2}, "temperature", "dropped"),
        ({"clip_high": 0.4}, "clip_high", "off-policy"),
        ({"learning_rate": 1e-4}, "learning_rate", "pretrained"),
    ],
)
def test_risky_values_warn_and_say_what_goes_wrong(changes, field, risk):
    with pytest.warns(UserWarning, match=field) as record:
        GRPOConfig(**changes)
    assert any(risk in str(w.message) for w in record)


def test_recommended_defaults_are_quiet_and_lr_warning_needs_a_pretrained_model():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GRPOConfig()
        GRPOConfig(learning_rate=1e-3, pretrained=False)
    assert set(RECOMMENDED) >= {"group_size", "beta", "temperature", "clip_low", "learning_rate"}
    assert check_recommended({"group_size": 2, "beta": 0.0}, warn=False)[0].startswith(
        "group_size = 2"
    )


def test_from_dict_rejects_unknown_names_listing_valid_ones():
    with pytest.raises(ValueError, match="group_size") as info:
        GRPOConfig.from_dict({"groupsize": 8})
    assert "groupsize" in str(info.value)
    with pytest.warns(DeprecationWarning, match="band"):  # the band lives in [curriculum] now
        cfg = GRPOConfig.from_dict({"band": [0.1, 0.9], "stop": ["\n\n"]})
    assert cfg.band == (0.1, 0.9) and cfg.stop == ("\n\n",)
    assert GRPOConfig.from_dict(cfg.to_dict()) == cfg


@pytest.mark.parametrize(
    "changes, words",
    [
        ({"rollout_backend": "sglang"}, ["rollout_backend", "'sglang'", "hf, vllm"]),
        ({"vllm_gpu_memory_utilization": 0.0}, ["vllm_gpu_memory_utilization", "0 < value <= 1"]),
        ({"vllm_gpu_memory_utilization": 1.5}, ["vllm_gpu_memory_utilization", "1.5"]),
        ({"tis_cap": -1.0}, ["tis_cap", "-1.0", "0 disables"]),
        ({"lora_r": -4}, ["lora_r", "-4", "0 = full fine-tuning"]),
        ({"lora_r": 8.5}, ["lora_r", "8.5", "integer"]),
        ({"lora_alpha": 0}, ["lora_alpha", "> 0"]),
        ({"lora_target_modules": []}, ["lora_target_modules", "q_proj"]),
        ({"lora_target_modules": ["q_proj", ""]}, ["lora_target_modules", "q_proj"]),
        ({"distributed": "deepspeed"}, ["distributed", "'deepspeed'", "auto, ddp, fsdp"]),
        ({"distributed": "fsdp", "lora_r": 8}, ["distributed", "'fsdp'", "LoRA with FSDP"]),
    ],
)
def test_engine_and_lora_settings_are_validated(changes, words):
    with pytest.raises(ValueError) as info:
        GRPOConfig(**changes)
    for word in words:
        assert word in str(info.value)


def test_defaults_follow_the_recommended_ranges_and_toml_strings_stay_whole():
    c = GRPOConfig()
    assert (c.prompts_per_step, c.beta, c.rollout_backend, c.tis_cap, c.lora_r) == (
        64,
        0.001,
        "hf",
        2.0,
        0,
    )
    assert (c.vllm_gpu_memory_utilization, c.vllm_sleep_mode) == (0.3, False)
    assert (c.lora_alpha, c.lora_target_modules) == (32.0, ("all-linear",))
    one = GRPOConfig.from_dict({"lora_target_modules": "q_proj", "stop": "###"})
    assert one.lora_target_modules == ("q_proj",) and one.stop == ("###",)
    back = GRPOConfig.from_dict(json.loads(json.dumps(one.to_dict())))
    assert back == one and one.to_dict()["lora_target_modules"] == ["q_proj"]


def _write(tmp_path, text):
    path = tmp_path / "run.toml"
    path.write_text(text)
    return path


BASE = """
[model]
path = "/models/tiny"
[data]
path = "GSM8K_DIR"
prompt_template = "{question}"
[reward]
verifier = "math"
references = { answer = "answer" }
[trainer]
group_size = 8
learning_rate = 1e-6
[curriculum]
band = [0.2, 0.8]
""".replace("GSM8K_DIR", GSM8K.as_posix())


def test_toml_with_typed_overrides(tmp_path):
    cfg = load_config(
        _write(tmp_path, BASE),
        [
            "trainer.group_size=16",
            "curriculum.band=[0.1, 0.9]",
            "model.path=/other/model",
            "trainer.stop=['###']",
        ],
    )
    assert cfg.trainer.group_size == 16 and cfg.trainer.curriculum.band == (0.1, 0.9)
    assert cfg.trainer.band == (0.1, 0.9)  # the deprecated field mirrors it
    assert cfg.trainer.stop == ("###",) and cfg.model.path == "/other/model"
    assert cfg.reward.references == {"answer": "answer"} and cfg.trainer.learning_rate == 1e-6
    assert json.loads(json.dumps(cfg.to_dict()))["trainer"]["group_size"] == 16


@pytest.mark.parametrize(
    "text, overrides, words",
    [
        (BASE + "[optimizer]\nlr = 1\n", [], ["optimizer", "Valid: ", "trainer"]),
        (BASE.replace("group_size = 8", "groupsize = 8"), [], ["groupsize", "group_size"]),
        (BASE, ["trainer.temperature=0"], ["[trainer]", "temperature", "> 0"]),
        (BASE, ["data.limit=0"], ["[data] limit", "integer >= 1"]),
        (BASE, ["reward.references=3"], ["references", "table"]),
        (BASE, ["learning_rate=1"], ["section.key=value"]),
        (BASE.replace('path = "/models/tiny"', ""), [], ["[model] needs path"]),
        ("[model\npath=1", [], ["not valid TOML"]),
    ],
)
def test_config_errors_say_what_to_change(tmp_path, text, overrides, words):
    with pytest.raises(UsageError) as info:
        load_config(_write(tmp_path, text), overrides)
    for word in words:
        assert word in str(info.value)


def test_override_values_parse_as_toml_or_fall_back_to_text():
    assert parse_overrides(["a.b=1e-6", "a.c=true", "a.d=/x/y", 'a.e="q"']) == [
        ("a.b", 1e-6),
        ("a.c", True),
        ("a.d", "/x/y"),
        ("a.e", "q"),
    ]


@needs_gsm8k
def test_load_rows_builds_prompts_from_gsm8k(tmp_path):
    cfg = load_config(_write(tmp_path, BASE), ["data.limit=5"])
    rows = load_rows(cfg.data)
    assert (
        len(rows) == 5 and rows[0]["prompt"] == rows[0]["question"] and "####" in rows[0]["answer"]
    )
    bad = load_config(
        _write(tmp_path, BASE.replace('prompt_template = "{question}"', 'prompt_column = "text"')),
        [],
    )
    with pytest.raises(UsageError, match="question"):
        load_rows(bad.data)


def test_a_row_without_the_prompt_column_is_named_with_its_own_columns(tmp_path):
    """Row 2's message listed row 0's columns, which do hold the prompt."""
    from passband.curriculum import write_rows

    write_rows(
        [{"prompt": "a", "x": 1}, {"prompt": "b"}, {"question": "c", "y": 2}], tmp_path / "d.jsonl"
    )
    cfg = load_config(
        _write(
            tmp_path,
            f'[model]\npath = "m"\n[data]\npath = "{tmp_path / "d.jsonl"}"\n'
            '[reward]\nverifier = "exact"\n',
        ),
        [],
    )
    with pytest.raises(UsageError, match="'prompt' is not in row 2; its columns are: question, y "):
        load_rows(cfg.data)


@needs_gsm8k  # the data loads first; only then does the missing model show
def test_cli_train_reports_config_errors_without_traceback(tmp_path, capsys):
    assert main(["train", str(_write(tmp_path, BASE)), "trainer.clip_low=2"]) == 2
    err = capsys.readouterr().err
    assert "clip_low" in err and "Traceback" not in err
    assert main(["train", str(tmp_path / "missing.toml")]) == 2
    assert main(["train", str(_write(tmp_path, BASE)), "data.limit=2"]) == 2  # no model there
    assert "/models/tiny" in capsys.readouterr().err


@needs_gsm8k
def test_example_config_loads(monkeypatch):
    monkeypatch.chdir(REPO)  # its [data] path is relative to the repository root, where users run
    cfg = load_config(REPO / "examples" / "gsm8k.toml", ["model.path=/models/x"])
    assert cfg.reward.verifier == "math" and load_rows(cfg.data)[0]["prompt"].startswith("Natalia")
    assert cfg.trainer.prompts_per_step == 64 and 0.001 <= cfg.trainer.beta <= 0.01


def test_penalties_build_a_reward_with_named_components(tmp_path):
    from passband.verifiers import Reward

    text = BASE + "[reward.penalties.overlong]\nmax_length = 100\ncache = 20\n"
    reward, columns = load_config(_write(tmp_path, text), []).reward.build()
    assert isinstance(reward, Reward) and columns is None  # the Reward maps the columns itself
    verdict = reward("so \\boxed{72}", answer="#### 72", num_tokens=95)
    assert verdict.passed and set(verdict.components) == {"correct", "overlong"}
    assert verdict.components["overlong"] < 0 and verdict.score < 1.0
    plain, columns = load_config(_write(tmp_path, BASE), []).reward.build()
    assert plain == "math" and columns == {"answer": "answer"}
    with pytest.raises(UsageError, match="known: overlong"):
        load_config(
            _write(tmp_path, BASE + "[reward.penalties.too_long]\nx = 1\n"), []
        ).reward.build()
    with pytest.raises(UsageError, match="overlong"):
        load_config(
            _write(tmp_path, BASE + "[reward.penalties.overlong]\nmax_len = 1\n"), []
        ).reward.build()
    with pytest.raises(UsageError, match="table of tables"):
        load_config(_write(tmp_path, BASE), ["reward.penalties.overlong=3"])


def test_a_risky_value_warns_at_the_line_that_built_the_config():
    """Not inside the dataclass machinery: a user sees their own line, and the test filter that
    turns passband's own warnings into errors does not mistake this one for the library's."""
    with pytest.warns(UserWarning, match="group_size") as record:
        GRPOConfig(group_size=2)
    assert record[0].filename == __file__


def test_a_misspelt_setting_names_the_closest_one_in_python_and_in_toml(tmp_path):
    """``GRPOConfig(grop_size=4)`` was the dataclass's bare TypeError, and a TOML typo listed
    about 50 valid names without pointing at the one meant."""
    from passband.config import load_config
    from passband.errors import ConfigError
    from passband.trainer import GRPOConfig

    with pytest.raises(ConfigError, match=r"\['grop_size'\]\. Did you mean 'group_size'\?"):
        GRPOConfig(grop_size=4)
    with pytest.raises(TypeError):  # still what Python raises for an unknown keyword
        GRPOConfig(grop_size=4)
    import inspect

    assert list(inspect.signature(GRPOConfig).parameters)[:2] == ["group_size", "prompts_per_step"]
    run = tmp_path / "run.toml"
    run.write_text(
        '[model]\npath = "m"\n[data]\npath = "d.jsonl"\n[reward]\nverifier = "exact"\n'
        "[trainer]\nlearning_rat = 1e-6\n"
    )
    with pytest.raises(ConfigError, match="Did you mean 'learning_rate'"):
        load_config(run)
    run.write_text(run.read_text().replace("[trainer]\nlearning_rat", "[curriculum]\nbnad"))
    with pytest.raises(ConfigError, match="Did you mean 'band'"):
        load_config(run)


def test_a_bad_override_is_named_as_the_command_lines_not_the_files(tmp_path):
    """``trainer.grop_size=4`` on the command line was reported as the file's [trainer] key,
    and a ``trainer.band`` override's deprecation pointed at line 1 of the file."""
    from passband.errors import ConfigError

    run = _write(
        tmp_path, '[model]\npath = "m"\n[data]\npath = "d.jsonl"\n[reward]\nverifier = "exact"\n'
    )
    with pytest.raises(ConfigError) as info:
        load_config(run, ["trainer.grop_size=4"])
    said = str(info.value)
    assert said.startswith("command-line override trainer.grop_size=4: unknown trainer setting")
    assert "Did you mean 'group_size'" in said and str(run) not in said
    with pytest.raises(ConfigError, match=r"override optimiser.lr=1: unknown section"):
        load_config(run, ["optimiser.lr=1"])
    with pytest.raises(ConfigError, match=r"override model.pth='x'.*Did you mean 'path'"):
        load_config(run, ["model.pth=x"])
    with pytest.raises(ConfigError, match=r"override curriculum.bnad=1: unknown curriculum"):
        load_config(run, ["curriculum.bnad=1"])
    with pytest.warns(DeprecationWarning, match="max_warmup_pool"):  # an old name still works
        assert (
            load_config(run, ["curriculum.max_hard_pool=9"]).trainer.curriculum.max_warmup_pool == 9
        )
    with pytest.warns(DeprecationWarning) as got:
        cfg = load_config(run, ["trainer.band=[0.3, 0.7]"])
    assert cfg.trainer.curriculum.band == (0.3, 0.7)
    assert got[0].filename.startswith("command line") and str(run) not in str(got[0].message)


def test_a_bad_override_value_is_named_as_the_command_lines_and_a_bad_file_value_as_the_files(
    tmp_path,
):
    """A known key with a bad value on the command line was blamed on the config file."""
    from passband.errors import ConfigError

    run = _write(
        tmp_path,
        '[model]\npath = "m"\n[data]\npath = "d.jsonl"\n[reward]\nverifier = "exact"\n'
        "[trainer]\ngroup_size = 8\n[curriculum]\nwarmup_retest_share = 0.1\n",
    )
    for override, words in [
        ("curriculum.warmup_retest_share=1.5", "warmup_retest_share=1.5 is outside"),
        ('trainer.group_size="8"', "group_size = '8' must be an integer"),
    ]:
        with pytest.raises(ConfigError) as info:
            load_config(run, ["trainer.seed=3", override])
        said = str(info.value)
        assert said.startswith(f"command-line override {override.split('=')[0]}="), said
        assert words in said and str(run) not in said
    run.write_text(run.read_text().replace("group_size = 8", "group_size = 1"))
    with pytest.raises(ConfigError) as info:  # the file's own mistake stays the file's
        load_config(run, ["trainer.seed=3"])
    assert str(info.value).startswith(f"{run}: [trainer]")


@pytest.mark.parametrize(
    "template, words",
    [
        (r"{a}+{b}= answer in \boxed{}", ["positional field {}", "{{ and }}"]),
        ("{a:b", ["unmatched '{'", "{{ and }}"]),
    ],
)
def test_a_template_with_a_bare_brace_says_how_to_write_one(tmp_path, template, words):
    """``\\boxed{}`` in a template read as "row 0 lacks Replacement index 0 out of range"."""
    from passband.curriculum import PrescoreConfig, PrescoreError, write_rows

    write_rows([{"a": 1, "b": 2}], tmp_path / "d.jsonl")
    text = BASE.replace("GSM8K_DIR", "").replace(
        GSM8K.as_posix(), (tmp_path / "d.jsonl").as_posix()
    )
    cfg = load_config(_write(tmp_path, text), [f"data.prompt_template={template!r}"])
    with pytest.raises(UsageError) as info:
        load_rows(cfg.data)
    with pytest.raises(PrescoreError) as scored:
        PrescoreConfig(prompt_template=template)
    for word in ["[data] prompt_template", *words]:
        assert word in str(info.value)
    for word in words:
        assert word in str(scored.value)


def test_vllm_with_a_truncated_sampler_warns_that_the_importance_weights_read_it():
    from passband.trainer import GRPOConfig

    with pytest.warns(UserWarning, match="top_p = 0.8: vLLM's log-probs are those of the trunc"):
        GRPOConfig(rollout_backend="vllm", top_p=0.8)
    with pytest.warns(UserWarning, match="top_k = 20"):
        GRPOConfig(rollout_backend="vllm", top_k=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GRPOConfig(rollout_backend="vllm", top_p=0.8, tis_cap=0)  # no weights: nothing to say
        GRPOConfig(top_p=0.8)  # the HF backend applies no weights


def test_a_messages_column_is_asked_without_its_answer_in_training_and_in_score(tmp_path):
    """``[data] prompt_column = "messages"`` (or ``messages_column``) is SFT data: training and
    ``passband score`` both ask without the final assistant message; another prompt column's final
    assistant message is a prefill, kept by both."""
    from passband.config import DataSection
    from passband.curriculum import PrescoreConfig
    from passband.trainer._data import prompt_of

    sft = [{"role": "user", "content": "2+5?"}, {"role": "assistant", "content": "7"}]
    path = tmp_path / "train.jsonl"
    path.write_text(json.dumps({"messages": sft, "conv": sft}) + "\n")
    for column, asked in (("messages", sft[:1]), ("conv", sft)):
        row = load_rows(DataSection(path=str(path), prompt_column=column))[0]
        assert prompt_of(row) == asked == PrescoreConfig(prompt_column=column).prompt(row), column
    row = load_rows(DataSection(path=str(path), messages_column="conv"))[0]
    assert prompt_of(row) == sft[:1] == PrescoreConfig(messages_column="conv").prompt(row)


def test_a_messages_column_beside_a_prompt_column_is_refused(tmp_path):
    from passband.config import DataSection
    from passband.errors import DataError

    sft = [{"role": "user", "content": "2+5?"}, {"role": "assistant", "content": "7"}]
    path = tmp_path / "train.jsonl"
    path.write_text(json.dumps({"prompt": "2+5?", "conv": sft}) + "\n")
    with pytest.raises(DataError, match="also has a 'prompt' column"):
        load_rows(DataSection(path=str(path), messages_column="conv"))
    assert load_rows(DataSection(path=str(path)))[0]["prompt"] == "2+5?"
