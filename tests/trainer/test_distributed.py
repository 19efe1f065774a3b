"""Multi-process training: two CPU processes (gloo, launched by torchrun) train the same model as one
process with the same global batch and seed, and a two-process run resumes from its checkpoint."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from passband.trainer import GRPOConfig, GRPOTrainer
from passband.trainer._batch import micro_batches
from passband.trainer._distributed import Dist, group_seed
from passband.trainer._metrics import PHASES

_TIMING = {"time_s", "time/step_s", "throughput/tokens_per_s", *(f"time/{p}_s" for p in PHASES)}

_CONFIG = """
[model]
path = "{root}/model"

[data]
path = "{root}/data.jsonl"

[reward]
verifier = "regex"
references = {{ pattern = "pattern" }}

[trainer]
group_size = 4
prompts_per_step = 3
max_new_tokens = 6
rollout_batch_size = 4
learning_rate = 0.003
pretrained = false
beta = 0.01
mu = 2
grad_accum = 2
max_steps = 4
checkpoint_every = 2
seed = 3
verifier_workers = 1
progress = false
"""


def _train(
    cfg: Path, out: Path, *extra: str, procs: int = 1, launcher: list[str] | None = None
) -> list[str]:
    launcher = launcher or (
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc_per_node={procs}",
            "-m",
        ]
        if procs > 1
        else [sys.executable, "-m"]
    )
    return [
        *launcher,
        "passband.cli",
        "train",
        str(cfg),
        f"trainer.output_dir={json.dumps(str(out))}",
        *extra,
    ]


_SCRATCH: list[str] = []  # the launched runs' TMPDIR (``scratch``), so they leave nothing in /tmp


@pytest.fixture(scope="module", autouse=True)
def scratch(tmp_path_factory):
    """torchrun leaves a ``torchelastic_*`` folder in the temporary directory on every launch:
    the launched runs get one of pytest's own, which pytest cleans."""
    _SCRATCH[:] = [str(tmp_path_factory.mktemp("tmpdir"))]
    yield _SCRATCH[0]
    _SCRATCH.clear()


def _run(cmd: list[str]) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    env.update({"TMPDIR": _SCRATCH[0]} if _SCRATCH else {})
    env[_MARK] = f"{os.getpid()}-{len(_LAUNCHED)}"  # every process of the run inherits it
    _LAUNCHED.append(env[_MARK])
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: a run that times out goes whole
    )
    _MARKS[proc.pid] = env[_MARK]
    return proc


def _finish(proc: subprocess.Popen) -> str:
    try:
        out, err = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        # a hung rank left alive would hold on and slow every later run of the suite; torchrun
        # starts its ranks in sessions of their own, so the launcher's group is not enough: an
        # orphaned rank kept the pipes open and the suite waited forever (stop 40)
        _kill_tree(proc.pid, _MARKS.get(proc.pid))
        out, err = proc.communicate(timeout=60)
        raise AssertionError(f"timed out after 300 s: {(out + err)[-3000:]}") from None
    assert proc.returncode == 0, err[-3000:]
    return out + err  # messages go to stderr once the progress bar exists


_MARK = "PASSBAND_TEST_RUN"
_LAUNCHED: list[str] = []
_MARKS: dict[int, str] = {}  # launched pid -> its run's mark


def _kill_tree(pid: int, mark: str | None) -> None:
    """SIGKILL ``pid``, its process group, every descendant and every process that inherited its
    run's ``mark`` (a rank whose launcher already exited is an orphan, no descendant any more)."""
    import psutil

    family = []
    with contextlib.suppress(psutil.Error):
        family = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    for other in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if mark is not None and other.environ().get(_MARK) == mark:
                family.append(other)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    for member in family:
        with contextlib.suppress(psutil.Error):
            member.kill()


def _close(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and abs(a - b) <= 1e-5 * max(1.0, abs(a))
    return a == b


def _weights(out: Path, step: int) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(out / "checkpoints" / f"step_{step}" / "model" / "model.safetensors"))


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory, tiny):
    """(config, root, wait): one process trains 4 steps straight in the background; ``wait()``
    returns its run directory once it is done. Started once for the module's tests."""
    root = tmp_path_factory.mktemp("dist")
    cfg = tiny.run_setup(root, _CONFIG)
    one, running = root / "one", [_run(_train(cfg, root / "one"))]

    def wait() -> Path:
        if running:
            _finish(running.pop())
        return one

    yield cfg, root, wait
    for proc in running:
        proc.kill()


@pytest.mark.slow
def test_two_processes_match_one_process_and_resume_across_ranks(reference_run):
    cfg, root, wait = reference_run
    two = root / "ddp"
    # Two processes run 2 steps, stop, and resume to 4; they must match one process's 4 steps.
    out = _finish(_run(_train(cfg, two, "trainer.max_steps=2", procs=2)))
    assert "2 processes, ddp" in out
    assert (two / "checkpoints" / "step_2" / "rng_ranks.pt").exists(), "not a 2-process run"
    assert len(torch.load(two / "checkpoints" / "step_2" / "rng_ranks.pt", weights_only=False)) == 2
    resumed = _finish(_run(_train(cfg, two, "--resume", procs=2)))
    assert (
        resumed.count("resuming from") == 1 and resumed.count("done: 4 steps") == 1
    )  # rank 0 only
    _compare_runs(wait(), two)


@pytest.mark.slow
def test_fsdp_matches_one_process_and_its_checkpoint_resumes_anywhere(reference_run):
    """Two FSDP ranks (sharded parameters, gradients, AdamW state) train what one process trains;
    their checkpoint is a plain full model that FSDP ranks or a single process resume alike."""
    cfg, root, wait = reference_run
    sharded, moved = root / "fsdp", root / "fsdp_then_one"
    fsdp = 'trainer.distributed="fsdp"'
    # The first half under `accelerate launch` with the example FSDP config file (the run config
    # says distributed = "auto"); the second under torchrun with distributed = "fsdp" and
    # gradient checkpointing.
    example = Path(__file__).resolve().parents[2] / "examples" / "accelerate_fsdp.yaml"
    accelerate = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--config_file",
        str(example),
        "--num_processes",
        "2",
        "--dynamo_backend",
        "no",
        "-m",
    ]
    out = _finish(_run(_train(cfg, sharded, "trainer.max_steps=2", launcher=accelerate)))
    assert "2 processes, fsdp" in out
    step2 = sharded / "checkpoints" / "step_2"
    optim = torch.load(step2 / "optimizer.pt", weights_only=False)
    assert all(isinstance(k, str) for k in optim["state"])  # gathered by parameter name
    assert json.loads((step2 / "model" / "config.json").read_text())["architectures"] == [
        "Qwen2ForCausalLM"
    ]  # not FSDP's wrapper class
    from transformers import AutoModelForCausalLM

    loaded = AutoModelForCausalLM.from_pretrained(step2 / "model")
    assert loaded.lm_head.weight is loaded.model.embed_tokens.weight  # still tied, saved once
    assert "lm_head.weight" not in _weights(sharded, 2)
    shutil.copytree(sharded, moved)
    # (the second half also checkpoints activations: the same math, through FSDP's units)
    resumed = _run(
        _train(cfg, sharded, "--resume", fsdp, "trainer.gradient_checkpointing=true", procs=2)
    )
    alone = _finish(_run(_train(cfg, moved, "--resume")))  # one process takes over the run
    assert _finish(resumed).count("resuming from") == 1 and "resuming from" in alone
    one = wait()
    _compare_runs(one, sharded)
    _compare_runs(one, moved)


def _compare_runs(one: Path, two: Path) -> None:
    """Metrics, per-group lines, curriculum state and final weights of two runs agree."""
    expected = [json.loads(x) for x in (one / "metrics.jsonl").read_text().splitlines()]
    got = [json.loads(x) for x in (two / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in got] == [1, 2, 3, 4]
    for want, have in zip(expected, got):
        assert set(want) == set(have)
        diff = {
            k: (want[k], have[k]) for k in want if k not in _TIMING and not _close(want[k], have[k])
        }
        assert not diff, f"step {want['step']}: {diff}"
    assert any(m["kl"] for m in got) and all(m["groups/effective"] for m in got)  # not vacuous
    groups = [
        [json.loads(x) for x in (d / "groups.jsonl").read_text().splitlines()] for d in (one, two)
    ]
    assert len(groups[0]) == len(groups[1]) >= 12
    for a, b in zip(*groups):
        assert all(_close(a[k], b[k]) for k in a), (a, b)
    assert json.loads((one / "curriculum.json").read_text()) == json.loads(
        (two / "curriculum.json").read_text()
    )

    start, w1, w2 = _weights(two, 2), _weights(one, 4), _weights(two, 4)
    assert any(not torch.equal(start[k], w2[k]) for k in start)  # the resumed run trained on
    for k in w1:
        assert torch.allclose(w1[k], w2[k], atol=1e-5, rtol=1e-4), k


def test_shards_cover_every_position_once_in_rank_order():
    for n in range(0, 9):
        for world in (1, 2, 3, 4):
            slices = [list(Dist(r, world).shard(n)) for r in range(world)]
            assert [i for s in slices for i in s] == list(range(n))
            assert max(map(len, slices)) - min(map(len, slices)) <= 1
            for per in (1, 2, 3):
                chunks = [c for r in range(world) for c in Dist(r, world).shard_chunks(n, per)]
                assert [i for c in chunks for i in c] == list(range(n))
                assert chunks == Dist().shard_chunks(n, per)  # the same chunks on any world size


def test_a_groups_samples_do_not_depend_on_which_groups_share_its_process(tiny, tmp_path):
    """Rolled out all together (one process) or split (two ranks), each prompt gets the same tokens."""
    tokenizer = tiny.tokenizer()
    rows = [{"prompt": f"{i}+{i}=", "kind": "x"} for i in range(4)]
    config = GRPOConfig(
        group_size=4,
        prompts_per_step=4,
        max_new_tokens=6,
        beta=0.0,
        output_dir=str(tmp_path),
        progress=False,
    )
    t = GRPOTrainer(tiny.model(tokenizer), tokenizer, rows, lambda c, **r: 0.0, config)
    prompts = [r["prompt"] for r in rows] + [rows[0]["prompt"]]
    seeds = [group_seed(0, 5, 0, k) for k in range(5)]
    torch.manual_seed(0)
    together = t.backend.rollout(prompts, 4, seeds).completion_ids
    torch.manual_seed(1)  # the global RNG must not matter
    split = (
        t.backend.rollout(prompts[:1], 4, seeds[:1]).completion_ids
        + t.backend.rollout(prompts[1:], 4, seeds[1:]).completion_ids
    )
    assert together == split and len(together) == 20
    assert together[:4] != together[16:], "the same prompt under another seed samples anew"
    other = t.backend.rollout(prompts, 4, [group_seed(0, 6, 0, k) for k in range(5)])
    assert other.completion_ids != together  # the seed does drive the samples
    assert len({group_seed(0, s, r, k) for s in range(3) for r in range(3) for k in range(5)}) == 45


def test_a_rank_without_sequences_trains_on_one_fully_masked_one(tiny, tmp_path):
    """DDP needs every rank in each all-reduce: a rank with nothing to train on adds zero loss."""
    tokenizer = tiny.tokenizer()
    config = GRPOConfig(
        group_size=4,
        prompts_per_step=2,
        max_new_tokens=4,
        beta=0.0,
        output_dir=str(tmp_path),
        progress=False,
    )
    t = GRPOTrainer(
        tiny.model(tokenizer), tokenizer, [{"prompt": "1+1="}], lambda c, **r: 0.0, config
    )
    seqs = [([5, 6], [7, 8], True), ([5, 6], [9], True)]
    adv = torch.tensor([1.0, -1.0])
    t.dist = Dist(rank=0, world_size=3)  # 2 sequences, 3 ranks: rank 0 gets none
    (mb,) = micro_batches(seqs, adv, [], t.dist, 1, t._collate)
    assert mb["mask"].sum() == 0 and mb["adv"].abs().sum() == 0 and mb["input_ids"].shape[0] == 1
    t.dist = Dist(rank=2, world_size=3)
    (mb,) = micro_batches(seqs, adv, [], t.dist, 1, t._collate)
    assert mb["adv"].tolist() == [-1.0] and mb["mask"].sum() == 1  # rank 2 gets the second one


def test_fsdp_ranks_run_the_same_number_of_micro_batches(tiny, tmp_path):
    """Under FSDP every forward is a collective: a rank with fewer sequences pads with fully
    masked micro-batches so all ranks run as many forwards; DDP ranks split their own share."""
    tokenizer = tiny.tokenizer()
    config = GRPOConfig(
        group_size=4,
        prompts_per_step=2,
        max_new_tokens=4,
        beta=0.0,
        grad_accum=4,
        output_dir=str(tmp_path),
        progress=False,
    )
    t = GRPOTrainer(
        tiny.model(tokenizer), tokenizer, [{"prompt": "1+1="}], lambda c, **r: 0.0, config
    )
    seqs = [([5, 6], [7 + i], True) for i in range(5)]
    adv = torch.arange(5, dtype=torch.float32)
    counts = {}
    for strategy in ("ddp", "fsdp"):
        for rank in range(3):  # 5 sequences over 3 ranks: 1, 2 and 2
            t.dist = Dist(rank=rank, world_size=3, strategy=strategy)
            micro = micro_batches(seqs, adv, [], t.dist, 4, t._collate)
            counts[strategy, rank] = len(micro)
            got = sorted(float(a) for mb in micro for a, m in zip(mb["adv"], mb["mask"][:, 0]) if m)
            assert got == [float(i) for i in t.dist.shard(5)]  # each sequence once, on its rank
    assert [counts["ddp", r] for r in range(3)] == [1, 2, 2]
    assert [counts["fsdp", r] for r in range(3)] == [2, 2, 2]


def test_strategy_follows_accelerate_fsdp_flag(monkeypatch):
    from passband.trainer._fsdp import resolve_strategy

    monkeypatch.delenv("ACCELERATE_USE_FSDP", raising=False)
    assert resolve_strategy("auto") == "ddp" and resolve_strategy("fsdp") == "fsdp"
    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")  # what `accelerate launch --use_fsdp` sets
    assert resolve_strategy("auto") == "fsdp" and resolve_strategy("ddp") == "ddp"
    with pytest.raises(ValueError, match="deepspeed"):
        resolve_strategy("deepspeed")


def test_optimizer_state_converts_between_index_and_name_keys(tiny):
    """FSDP saves AdamW state by parameter name, one process by position: either loads the other."""
    from passband.trainer._checkpoint import _by_index, _by_name

    model = tiny.model(tiny.tokenizer())
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    ids = torch.tensor([[3, 4, 5, 6]])
    model(input_ids=ids, labels=ids).loss.backward()
    opt.step()
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    by_index = opt.state_dict()
    by_name = _by_name(by_index, names)
    assert set(by_name["state"]) == set(names) and by_name["param_groups"][0]["params"] == names
    assert _by_name(by_name, names) is by_name and _by_index(by_index, names) is by_index
    back = _by_index(by_name, names)
    fresh = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    fresh.load_state_dict(back)
    for i, state in by_index["state"].items():
        assert torch.equal(fresh.state_dict()["state"][i]["exp_avg"], state["exp_avg"])
    with pytest.raises(RuntimeError, match="does not train"):
        _by_index(_by_name(by_index, [f"other.{n}" for n in names]), names)


_HOLDINGS = """
import json, sys, torch
sys.path.insert(0, {tests!r})
from conftest import make_model, make_tokenizer
from passband.trainer import GRPOConfig, GRPOTrainer

tok = make_tokenizer()
model = make_model(tok, layers=2, hidden=64)
full = sum(p.numel() for p in model.parameters())
config = GRPOConfig(group_size=4, prompts_per_step=2, max_new_tokens=6, beta=0.01, max_steps=1,
                    use_curriculum=False, filter_zero_variance=False, distributed="fsdp",
                    output_dir={out!r}, progress=False)
rows = [{{"prompt": f"{{i}}+{{i}}="}} for i in range(4)]
trainer = GRPOTrainer(model, tok, rows, lambda c, **r: float(len(c) % 2), config)
trainer.train()
local = lambda ps: sum((p.to_local() if hasattr(p, "to_local") else p).numel() for p in ps)
adam = sum(v.to_local().numel() for s in trainer.optimizer.state.values() for k, v in s.items()
           if k != "step")
from passband.trainer._fsdp import full_model_state
from passband.trainer.rollout_vllm import _hf_weights
synced = dict(_hf_weights(trainer.model))  # what a vLLM engine on each rank would load
gathered = full_model_state(trainer.model)  # rank 0 only
assert all(not hasattr(v, "to_local") for v in synced.values())
assert all(torch.equal(synced[k], v) for k, v in gathered.items()) and len(synced) >= len(gathered)
assert synced["lm_head.weight"].shape == synced["model.embed_tokens.weight"].shape
print("HELD " + json.dumps(dict(full=full, policy=local(trainer.model.parameters()),
      reference=local(trainer.reference.parameters()), adam=adam,
      plain=[n for m in (trainer.model, trainer.reference) for n, p in m.named_parameters()
             if not hasattr(p, "to_local")])), flush=True)  # one buffered write per rank
from passband.trainer import finish_distributed
finish_distributed(trainer)  # as `passband train` does: a rank left in the group at exit could
# abort in gloo's teardown ("terminate called without an active exception", 1 run in 9)
"""


@pytest.mark.slow
def test_each_fsdp_rank_holds_half_of_policy_reference_and_adamw(tmp_path):
    """After a real step (the reference has run forward) every weight is still a shard, and the
    weights a vLLM engine is synced with are the full tensors."""
    script = tmp_path / "held.py"
    script.write_text(_HOLDINGS.format(tests=str(Path(__file__).parent), out=str(tmp_path / "run")))
    out = _finish(
        _run(
            [
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--standalone",
                "--nproc_per_node=2",
                str(script),
            ]
        )
    )
    # both ranks print to one pipe, so their lines can interleave ("HELDHELD {...}")
    held = [json.loads(m) for m in re.findall(r"HELD (\{[^{}]*\})", out)]
    assert len(held) == 2
    for h in held:
        assert h["plain"] == []  # nothing left gathered (FSDP2 keeps the root gathered by default)
        for what in ("policy", "reference"):
            assert abs(h[what] - h["full"] / 2) <= 64, (what, h)  # half, up to shard padding
        assert abs(h["adam"] - h["full"]) <= 128, h  # two moments of half the weights
