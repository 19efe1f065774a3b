"""Score, train and the memory of one update on the real model (SmolLM2-135M-Instruct, 49k vocab)."""

from __future__ import annotations

import json
import math
import threading
import time

import pytest

pytestmark = pytest.mark.slow

PAIRS = [(3, 4), (12, 9), (7, 15), (18, 6)]


def test_score_k2_on_a_few_prompts(real_model_dir, helpers, tmp_path, capsys):
    from passband.cli import main
    from passband.curriculum import read_rows, write_rows

    data = tmp_path / "add.jsonl"
    write_rows(helpers.addition_rows(PAIRS[:3]), data)
    out = tmp_path / "scored.jsonl"
    assert (
        main(
            [
                "score",
                str(data),
                "--model",
                str(real_model_dir),
                "--verifier",
                "math",
                "--ref",
                "answer=answer",
                "--k",
                "2",
                "--no-adaptive",
                "--max-tokens",
                "24",
                "--no-progress",
                "--device",
                "cpu",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    rows = read_rows(out)
    assert [r["answer"] for r in rows] == ["7", "21", "22"]
    for r in rows:
        assert r["trials"] == 2 and 0 <= r["passes"] <= 2 and r["pass_rate"] == r["passes"] / 2
    assert "saved" in capsys.readouterr().out


def test_two_grpo_steps_with_the_math_verifier(real_model, helpers, tmp_path):
    import copy

    import torch

    from passband.trainer import GRPOConfig, GRPOTrainer

    model, tok = real_model
    policy = copy.deepcopy(model)
    before = [p.detach().clone() for p in policy.parameters()]
    config = GRPOConfig(
        group_size=4,
        prompts_per_step=2,
        max_new_tokens=16,
        learning_rate=1e-5,
        beta=0.0,
        max_steps=2,
        output_dir=str(tmp_path / "run"),
        progress=False,
        verifier_workers=1,
        seed=0,
    )
    with GRPOTrainer(
        policy,
        tok,
        helpers.addition_rows(PAIRS),
        "math",
        config,
        reference_columns={"answer": "answer"},
    ) as trainer:
        last = trainer.train()
    lines = [
        json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    ]
    assert [m["step"] for m in lines] == [1, 2] and last["step"] == 2
    trained = [m for m in lines if m["loss"] is not None]
    assert trained, "no step had a group with reward variance: the test would check nothing"
    assert all(math.isfinite(m["loss"]) and math.isfinite(m["grad_norm"]) for m in trained)
    assert any(not torch.equal(a, b) for a, b in zip(before, policy.parameters()))


class _PeakRSS:
    """Highest resident memory seen by a 5 ms polling thread, above the level at entry."""

    def __enter__(self):
        import psutil

        self._proc, self.peak, self._stop = psutil.Process(), 0, threading.Event()
        self.base = self._proc.memory_info().rss
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def _poll(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self._proc.memory_info().rss - self.base)
            time.sleep(0.005)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


# One update of 8 sequences x 24 tokens: gradients (1x the fp32 weights), AdamW's two moments
# (2x, allocated on the first step), plus activations and the [8, 24, 49152] fp32 logits with
# their log-softmax (~40 MB each). Bound: 3x the weights + 1 GiB.
def test_memory_of_one_update_at_this_vocabulary_size(real_model, helpers, tmp_path):
    import copy

    from passband.trainer import GRPOConfig, GRPOTrainer

    pytest.importorskip("psutil")
    model, tok = real_model
    policy = copy.deepcopy(model)
    weights = sum(p.numel() * p.element_size() for p in policy.parameters())
    config = GRPOConfig(
        group_size=8,
        prompts_per_step=1,
        max_new_tokens=24,
        learning_rate=1e-5,
        beta=0.0,
        max_steps=1,
        output_dir=str(tmp_path / "run"),
        progress=False,
        verifier_workers=1,
        filter_zero_variance=False,
        use_curriculum=False,
    )
    trainer = GRPOTrainer(
        policy,
        tok,
        helpers.addition_rows(PAIRS[:1]),
        "math",
        config,
        reference_columns={"answer": "answer"},
    )
    groups, _ = trainer._collect_groups()
    with _PeakRSS() as mem:
        stats = trainer._update(groups)
    trainer.close()
    bound = 3 * weights + 2**30
    assert stats["loss"] is not None
    assert mem.peak <= bound, (
        f"one update grew RSS by {mem.peak / 2**20:.0f} MiB > {bound / 2**20:.0f} MiB"
    )
