"""``passband doctor``: range findings, the memory/time estimate and the command's edges."""

import dataclasses
import math

import pytest

from passband._doctor import TYPICAL, check_settings
from passband._estimate import (
    HARDWARE,
    Workload,
    estimate,
    format_estimate,
    hardware,
    parse_count,
    shape_from_config,
    shape_from_params,
)
from passband.cli import main
from passband.trainer.config import RECOMMENDED, GRPOConfig

# (field, value, pretrained, expected severity, expected status): typical ranges give notes,
# the trainer's RECOMMENDED bounds give warnings.
CASES = [
    ("group_size", 12, True, "ok", "ok"),
    ("group_size", 4, True, "note", "low"),
    ("group_size", 2, True, "warn", "low"),
    ("group_size", 64, True, "note", "high"),
    ("beta", 0.005, True, "ok", "ok"),
    ("beta", 0.0, True, "note", "low"),
    ("beta", 0.04, True, "warn", "high"),
    ("clip_low", 0.1, True, "note", "low"),
    ("clip_high", 0.35, True, "warn", "high"),
    ("temperature", 1.0, True, "ok", "ok"),
    ("temperature", 0.7, True, "note", "low"),
    ("temperature", 0.2, True, "warn", "low"),
    ("temperature", 1.5, True, "note", "high"),
    ("learning_rate", 3e-6, True, "ok", "ok"),
    ("learning_rate", 1e-5, True, "note", "high"),
    ("learning_rate", 5e-5, True, "warn", "high"),
    ("learning_rate", 1e-3, False, "ok", "n/a"),
    ("prompts_per_step", 8, True, "note", "low"),
    ("prompts_per_step", 1024, True, "note", "high"),
    ("prompts_per_step", 256, True, "ok", "ok"),
]


@pytest.mark.parametrize("name,value,pretrained,severity,status", CASES)
def test_findings_table(name, value, pretrained, severity, status):
    values = {**GRPOConfig(pretrained=pretrained).to_dict(), name: value}
    found = {f.field: f for f in check_settings(values, {name})}
    f = found[name]
    assert (f.severity, f.status) == (severity, status)
    assert (f.message != "") == (severity != "ok" or status == "n/a")
    if severity == "warn":
        assert RECOMMENDED[name][2] in f.message  # the trainer's own explanation, one source
    assert not f.default


def test_every_issue_range_is_checked():
    assert {
        "group_size",
        "beta",
        "clip_low",
        "clip_high",
        "temperature",
        "learning_rate",
        "prompts_per_step",
    } <= set(TYPICAL)
    assert TYPICAL["group_size"][:2] == (8, 16) and TYPICAL["beta"][:2] == (0.001, 0.01)
    assert TYPICAL["learning_rate"][:2] == (1e-6, 5e-6)
    names = {f.field for f in check_settings(GRPOConfig().to_dict())}
    assert set(RECOMMENDED) <= names


def _config(tmp_path, trainer: str, model_dir=None) -> str:
    """A config train accepts up to loading the model: data it can read, a model folder (empty:
    no config.json, so the estimate needs --params)."""
    path = tmp_path / "run.toml"
    model = model_dir or tmp_path / "no-config-model"
    if model_dir is None:
        model.mkdir(exist_ok=True)
    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "1+1=", "answer": "2"}\n')
    path.write_text(f'[model]\npath = "{model}"\n[data]\npath = "{data}"\n[trainer]\n{trainer}\n')
    return str(path)


def test_cli_explains_findings_and_estimates(tmp_path, capsys):
    cfg = _config(tmp_path, "group_size = 4\nbeta = 0.04\nprompts_per_step = 128")
    assert (
        main(["doctor", cfg, "trainer.temperature=0.7", "--params", "1.5B", "--gpu", "a100"]) == 0
    )
    out = capsys.readouterr().out
    assert "NOTE  group_size = 4" in out and TYPICAL["group_size"][2] in out  # the why, below it
    assert "WARN  beta = 0.04" in out and "the trainer warns too" in out
    assert "NOTE  temperature = 0.7" in out and "ok    clip_low = 0.2" in out
    assert "(default)" in out.split("clip_low")[1].splitlines()[0]
    for item in (
        "policy weights",
        "gradients",
        "AdamW moments",
        "reference model",
        "activations (training)",
        "KV cache (generation)",
        "peak",
        "generation",
        "training",
    ):
        assert item in out
    assert "NVIDIA A100" in out and "6 x N" not in out and "8 x N x tokens" in out  # 6N + 2N ref


def test_cli_without_model_config_skips_estimate(tmp_path, capsys):
    assert main(["doctor", _config(tmp_path, "group_size = 8")]) == 0
    assert "estimate skipped" in capsys.readouterr().out


def test_a_missing_model_folder_is_never_looked_up_online(tmp_path, capsys, monkeypatch):
    """``org/missing-model`` is a valid Hub id: doctor asked the Hub for its tokenizer (10
    retries, 49 s offline) before saying the folder was missing. Like train, it reads disk only."""
    import transformers

    asked = []

    def record(*args, **kwargs):
        asked.append(args)
        raise OSError("no such tokenizer")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", record)
    monkeypatch.chdir(tmp_path)
    cfg = _config(tmp_path, "group_size = 8", model_dir="org/missing-model")
    assert main(["doctor", cfg]) == 1  # train refuses it: FAIL
    out = capsys.readouterr().out
    assert not asked, asked
    assert "FAIL  model.path = 'org/missing-model'" in out
    assert "the tokenizer folder 'org/missing-model' does not exist here" in out


def test_cli_user_errors(tmp_path, capsys):
    assert main(["doctor", str(tmp_path / "missing.toml")]) == 2
    assert main(["doctor", _config(tmp_path, "grup_size = 8")]) == 2
    assert "unknown trainer setting" in capsys.readouterr().err
    assert main(["doctor", _config(tmp_path, ""), "--params", "lots"]) == 2


@pytest.mark.slow  # imports transformers and builds three tiny models (~15 s on 2 busy cores)
def test_parameter_count_matches_real_models(tmp_path):
    from transformers import AutoModelForCausalLM, GPT2Config, LlamaConfig, Qwen2Config

    small = dict(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=128,
        vocab_size=1000,
    )
    for i, cfg in enumerate(
        [
            LlamaConfig(**small, tie_word_embeddings=False),
            Qwen2Config(**small),
            GPT2Config(
                n_embd=64,
                n_layer=2,
                n_head=4,
                vocab_size=1000,
                n_positions=128,
                bos_token_id=0,
                eos_token_id=0,
            ),
        ]
    ):
        cfg.save_pretrained(tmp_path / str(i))
        model = AutoModelForCausalLM.from_config(cfg)
        assert shape_from_config(tmp_path / str(i)).params == sum(
            p.numel() for p in model.parameters()
        )


def test_estimate_arithmetic_and_fit_advice():
    shape = shape_from_params(parse_count("7e9"))
    assert 6.5e9 < 12 * shape.layers * shape.hidden**2 < 7.5e9
    w = Workload(prompts_per_step=64, group_size=8, max_new_tokens=512, beta=0.01)
    est = estimate(shape, w, HARDWARE["h200"])
    items = {name: b for name, b, _ in est.memory}
    assert items["AdamW moments"] == 2 * items["gradients"] == 8 * 7e9
    assert est.peak_bytes == sum(items.values()) - min(
        items["activations (training)"], items["KV cache (generation)"]
    )
    # decode is bandwidth bound: the same work is slower on the A100 by about the bandwidth ratio
    gen = {gpu: estimate(shape, w, HARDWARE[gpu]).time[0][1] for gpu in ("h200", "a100")}
    assert 1.5 < gen["a100"] / gen["h200"] < 3.5
    train = {name: s for name, s, _ in est.time}["training"]
    assert math.isclose(train, 8 * 7e9 * 512 * 768 / (989e12 * 0.4))
    small = Workload(prompts_per_step=8, group_size=8, max_new_tokens=256)
    assert estimate(shape_from_params(5e8), small, hardware("h200")).peak_bytes < 141e9


def test_the_roll_out_budget_sizes_the_generation_estimate():
    """A hard step rolls out ``max_oversample`` x the batch in one call: the KV cache and the
    generation time are those of the rows rolled out, not of the rows trained."""
    shape = shape_from_params(5e8)
    kw = dict(prompts_per_step=16, group_size=8, max_new_tokens=256, rollout_batch_size=256)
    plain, wide = (
        estimate(shape, Workload(**kw, max_oversample=o), HARDWARE["h200"]) for o in (1, 2)
    )
    kv = [{n: b for n, b, _ in e.memory}["KV cache (generation)"] for e in (plain, wide)]
    gen = [{n: t for n, t, _ in e.time}["generation"] for e in (plain, wide)]
    assert kv[1] == 2 * kv[0] and gen[1] > gen[0]
    train = [{n: t for n, t, _ in e.time}["training"] for e in (plain, wide)]
    assert train[0] == train[1], "the trained batch is the same"


def test_grad_accum_advice_makes_it_fit():
    from passband._estimate import format_estimate

    shape = shape_from_params(1.5e9)
    w = Workload(prompts_per_step=128, group_size=8, max_new_tokens=1024)
    text = format_estimate(estimate(shape, w, HARDWARE["h200"]), shape, HARDWARE["h200"], w)
    assert "DOES NOT FIT" in text and "grad_accum >= " in text
    accum = int(text.split("grad_accum >= ")[1].split()[0])
    fixed = dataclasses.replace(w, grad_accum=accum)
    assert estimate(shape, fixed, HARDWARE["h200"]).peak_bytes <= 141e9 * 0.9
    assert "gradient_checkpointing = true" in text
    on = dataclasses.replace(w, max_new_tokens=8192, gradient_checkpointing=True)
    text = format_estimate(estimate(shape, on, HARDWARE["h200"]), shape, HARDWARE["h200"], on)
    assert "DOES NOT FIT" in text and "gradient_checkpointing" not in text.split("DOES NOT FIT")[1]


def test_fsdp_over_several_gpus_splits_the_model_state_and_the_advice_says_so(tmp_path, capsys):
    h200 = HARDWARE["h200"]
    shape = shape_from_params(parse_count("14B"))
    one = Workload(
        prompts_per_step=64,
        group_size=8,
        max_new_tokens=512,
        beta=0.001,
        gradient_checkpointing=True,
    )
    text = format_estimate(estimate(shape, one, h200), shape, h200, one)
    assert "alone need" in text and 'distributed = "fsdp"' in text and "tensor-parallel" not in text
    need = int(text.split("--gpus ")[1].split(")")[0])
    sharded = dataclasses.replace(one, gpus=need, sharded=True)
    est = estimate(shape, sharded, h200)
    items = {name: b for name, b, _ in est.memory}
    assert items["AdamW moments"] == 8 * shape.params / need  # split over the GPUs
    static = sum(b for n, b in items.items() if not n.startswith(("activations", "KV")))
    assert static <= 141e9 * 0.9 * 0.6  # the advised count leaves room for the rest
    assert "alone need" not in format_estimate(est, shape, h200, sharded)
    ddp = estimate(shape, dataclasses.replace(one, gpus=need), h200)
    assert {n: b for n, b, _ in ddp.memory}["AdamW moments"] == 8 * shape.params  # replicated
    assert ddp.step_seconds < estimate(shape, one, h200).step_seconds  # the batch is split
    huge = shape_from_params(parse_count("70B"))  # bf16 weights alone fill an H200
    assert "tensor-parallel" in format_estimate(estimate(huge, one, h200), huge, h200, one)
    cfg = _config(tmp_path, 'distributed = "fsdp"')
    assert main(["doctor", cfg, "--params", "14B", "--gpus", "16"]) == 0
    out = capsys.readouterr().out
    assert "/ 16 GPUs (FSDP)" in out and "16 GPUs, FSDP" in out
    assert main(["doctor", cfg, "--params", "7B", "--gpus", "0"]) == 2


def test_cli_names_the_phase_that_dominates_a_runs_step_time(tmp_path, capsys):
    import json

    run = tmp_path / "run"
    run.mkdir()
    phases = {
        "time/sample_s": 0.01,
        "time/generate_s": 0.2,
        "time/score_s": 0.7,
        "time/update_s": 0.05,
        "time/sync_s": 0.0,
    }
    lines = [{"step": 1, "time/step_s": 9.0, **phases, "time/score_s": 8.0}]  # start-up: left out
    lines += [{"step": k, "time/step_s": 1.0, **phases} for k in (2, 3)]
    (run / "metrics.jsonl").write_text("".join(json.dumps(m) + "\n" for m in lines))
    cfg = _config(tmp_path, f"output_dir = {json.dumps(str(run))}")
    assert main(["doctor", cfg]) == 0
    out = capsys.readouterr().out
    assert (
        "time: score dominates (70% of step time over 2 steps" in out and "verifier_workers" in out
    )


@pytest.mark.slow  # imports transformers, builds the demo's tiny model
def test_prompt_lengths_are_measured_on_the_data_with_the_models_tokenizer(tmp_path, capsys):
    import json

    from passband.demo.model import build_model
    from passband.demo.tokenizer import build_tokenizer

    tok = build_tokenizer()  # one token per character; the model has 64 positions
    build_model(tok).save_pretrained(tmp_path / "m")
    tok.save_pretrained(tmp_path / "m")
    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(json.dumps({"prompt": p, "answer": "0"}) + "\n" for p in ["1+2=", "12+34=", "7="])
    )
    cfg = tmp_path / "run.toml"
    cfg.write_text(
        f'[model]\npath = "{tmp_path / "m"}"\n[data]\npath = "{data}"\n'
        "[trainer]\nmax_new_tokens = 6\nlearning_rate = 1e-4\n"
    )
    longest = max(len(tok("12+34=")["input_ids"]), 1)
    assert main(["doctor", str(cfg), "--gpu", "cpu"]) == 0
    out = capsys.readouterr().out
    assert f"{longest} at most (measured on 3 of 3 [data] rows)" in out
    assert f"ok    context: {longest}-token prompts + max_new_tokens = 6 fit the model's 64" in out
    assert "for a 430k-parameter model" in out and "model:    430k parameters" in out
    assert main(["doctor", str(cfg), "--gpu", "cpu", "--prompt-tokens", "60"]) == 0
    assert "WARN  context: prompts of 60 tokens" in capsys.readouterr().out


def test_a_wide_roll_out_budget_gets_a_note():
    notes = {f.field: f for f in check_settings({**GRPOConfig().to_dict(), "max_oversample": 4})}
    assert notes["max_oversample"].severity == "note"
    defaults = {f.field: f for f in check_settings(GRPOConfig().to_dict())}
    assert defaults["max_oversample"].severity == "ok"


def test_the_speed_advice_leaves_out_what_the_config_already_does(tmp_path, capsys):
    """ "mu = 1" and "a smaller grad_accum" were advised to a run at mu = 1, grad_accum = 1."""
    import json

    run = tmp_path / "run"
    run.mkdir()
    phases = {"time/generate_s": 0.1, "time/score_s": 0.1, "time/update_s": 0.8}
    lines = [{"step": k, "time/step_s": 1.0, **phases} for k in (1, 2, 3)]
    (run / "metrics.jsonl").write_text("".join(json.dumps(m) + "\n" for m in lines))
    cfg = _config(tmp_path, f"output_dir = {json.dumps(str(run))}")

    def advice(*overrides):
        assert main(["doctor", cfg, *overrides]) == 0
        line = next(x for x in capsys.readouterr().out.splitlines() if "dominates" in x)
        return line.split("to speed it up: ")[1]

    cheap = advice("trainer.mu=1", "trainer.grad_accum=1", "trainer.beta=0.0", "trainer.bf16=true")
    assert "mu = 1" not in cheap and "grad_accum" not in cheap and "beta = 0" not in cheap
    assert "already at their cheapest" in cheap
    costly = advice(
        "trainer.mu=2", "trainer.grad_accum=4", "trainer.beta=0.01", "trainer.bf16=false"
    )
    for item in ("bf16 on a GPU", "a smaller grad_accum", "beta = 0", "mu = 1"):
        assert item in costly
    assert "mu = 1" not in advice("trainer.mu=1", "trainer.grad_accum=4")
