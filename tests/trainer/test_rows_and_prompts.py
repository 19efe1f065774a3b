"""Every training row is checked before the first rollout, with a real tiny model and tokenizer:
bad rows are counted and named (or skipped on request), prompts are measured against the model's
positions (refused or truncated on request), and a config may be given as a mapping."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from passband.errors import ConfigError, DataError
from passband.trainer import GRPOConfig, GRPOTrainer

SETTINGS = {
    "group_size": 4,
    "prompts_per_step": 2,
    "max_new_tokens": 6,
    "pretrained": False,
    "beta": 0.0,
    "max_steps": 1,
    "progress": False,
    "use_curriculum": False,
}


def _rows(n=12):
    return [{"prompt": f"{i}*{i}=", "pattern": f"(?s).*{i % 10}.*"} for i in range(n)]


def _trainer(tiny, tokenizer, rows, tmp_path, **settings):
    config = {**SETTINGS, "output_dir": str(tmp_path / "run"), **settings}
    return GRPOTrainer(
        tiny.model(tokenizer),
        tokenizer,
        rows,
        "regex",
        config,
        reference_columns={"pattern": "pattern"},
    )


def test_unusable_rows_after_the_first_are_found_up_front(tiny, tokenizer, tmp_path):
    rows = _rows()
    rows[5]["prompt"] = None
    del rows[7]["pattern"]
    rows[9]["pattern"] = None
    rows[10]["prompt"] = {"text": "not a prompt"}
    with pytest.raises(DataError) as info:
        _trainer(tiny, tokenizer, rows, tmp_path)
    message = str(info.value)
    assert message.startswith("4 of 12 training rows are unusable")
    assert "row 5: the prompt is null" in message
    assert "row 7: lacks the reference column 'pattern'" in message
    assert "row 9: reference column 'pattern' is null" in message
    assert "row 10: the prompt is a dict" in message and "skip_bad_rows = true" in message


def test_the_reference_a_verifier_declares_is_checked_without_reference_columns(
    tiny, tokenizer, tmp_path
):
    """``math`` needs ``answer``: a null or missing one was found only as verifier errors at
    step 1 unless reference_columns named it."""
    rows = [{"prompt": f"{i}+{i}=", "answer": str(2 * i)} for i in range(6)]
    rows[2]["answer"] = None
    del rows[4]["answer"]
    config = {**SETTINGS, "output_dir": str(tmp_path / "run")}
    with pytest.raises(DataError) as info:
        GRPOTrainer(tiny.model(tokenizer), tokenizer, rows, "math", config)
    message = str(info.value)
    assert message.startswith("2 of 6 training rows are unusable")
    assert "row 2: reference column 'answer' is null" in message
    assert "row 4: lacks the reference column 'answer'" in message


def test_skip_bad_rows_trains_on_the_rest_and_says_how_many(tiny, tokenizer, tmp_path):
    rows = _rows()
    rows[3]["prompt"] = "   "
    with pytest.warns(UserWarning, match="skipping 1 of 12 unusable training rows"):
        t = _trainer(tiny, tokenizer, rows, tmp_path, skip_bad_rows=True)
    assert len(t.rows) == 11 and all(r["prompt"].strip() for r in t.rows)
    assert t.train()["step"] == 1
    # groups.jsonl names each prompt's row in the file too: prompt_id counts the kept rows
    import json

    lines = [
        json.loads(x) for x in (Path(t.config.output_dir) / "groups.jsonl").read_text().splitlines()
    ]
    assert lines and all(g["row"] == g["prompt_id"] + (g["prompt_id"] >= 3) for g in lines)
    assert all(rows[g["row"]]["prompt"] == t.rows[g["prompt_id"]]["prompt"] for g in lines)


def test_priors_keyed_by_dataset_position_reach_their_prompt_when_rows_are_skipped(
    tiny, tokenizer, tmp_path
):
    """With row 0 skipped, priors={3: ...} meant for "3*3=" used to land on "4*4=" (position 3
    of the kept rows); a sampler built on dataset positions is refused."""
    from passband.curriculum import Curriculum

    rows = _rows()
    rows[0]["prompt"] = None
    with pytest.warns(UserWarning, match="skipping 1 of 12.*priors= keys stay dataset positions"):
        t = GRPOTrainer(
            tiny.model(tokenizer),
            tokenizer,
            rows,
            "regex",
            {
                **SETTINGS,
                "output_dir": str(tmp_path / "p"),
                "skip_bad_rows": True,
                "use_curriculum": True,
            },
            reference_columns={"pattern": "pattern"},
            priors={3: (8, 8), 0: (0, 8)},
        )
    cur = t.sampler
    assert t.rows[2]["prompt"] == "3*3=" and cur.classify(2) == "too_easy"
    from passband.trainer.sampling import _to_kept_positions

    said = []  # a key that is no position is passed on, for the curriculum to count as unused
    assert _to_kept_positions({"1": (1, 2), 0: (1, 2), 2: (3, 4)}, [1, 2], said.append) == {
        "1": (1, 2),
        1: (3, 4),
    }
    assert said == ["curriculum: 1 priors= keys are rows skipped as unusable (skip_bad_rows)"]
    assert cur.classify(3) == "in_band" and cur.metrics()["priors/used"] == 1
    with pytest.warns(UserWarning), pytest.raises(ConfigError, match="first at position 0"):
        GRPOTrainer(
            tiny.model(tokenizer),
            tokenizer,
            rows,
            "regex",
            {**SETTINGS, "output_dir": str(tmp_path / "s"), "skip_bad_rows": True},
            reference_columns={"pattern": "pattern"},
            sampler=Curriculum(range(12)),
        )


def test_a_prompt_longer_than_the_models_positions_is_refused_or_truncated(
    tiny, tokenizer, tmp_path
):
    rows = _rows(3)
    rows[1]["prompt"] = "1+" * 200 + "2="  # 402 tokens; the model has 256 positions
    with pytest.raises(DataError, match=r"row 1: the prompt has more than 250 tokens"):
        _trainer(tiny, tokenizer, rows, tmp_path)
    t = _trainer(tiny, tokenizer, rows, tmp_path, prompt_overflow="truncate")
    kept = t.rows[1]["prompt"]
    assert kept.endswith("1+2=") and len(tokenizer(kept)["input_ids"]) <= 250
    assert t.train()["step"] == 1  # it generates without an IndexError
    # a resume with more answer tokens truncates row 1 further; the data is the same, so the
    # checkpoint's digest (taken before truncation) still matches
    again = _trainer(
        tiny,
        tokenizer,
        rows,
        tmp_path,
        prompt_overflow="truncate",
        resume=True,
        max_steps=2,
        max_new_tokens=12,
    )
    assert again.rows[1]["prompt"] != kept
    again._begin()
    assert again.step == 1


def test_a_huge_prompt_is_refused_without_a_huge_allocation(tiny, tokenizer, tmp_path):
    import resource

    rows = _rows(2)
    rows[0]["prompt"] = "7" * 10_000_000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(DataError, match="row 0: the prompt has more than 250 tokens"):
        _trainer(tiny, tokenizer, rows, tmp_path)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 2000, f"checking one prompt grew the process by {grown_mb:.0f} MB"


def test_max_new_tokens_beyond_the_models_positions_is_a_config_error(tiny, tokenizer, tmp_path):
    with pytest.raises(ConfigError, match="max_new_tokens = 100000 leaves no room.*256 positions"):
        _trainer(tiny, tokenizer, _rows(2), tmp_path, max_new_tokens=100000)


def test_the_config_may_be_a_mapping(tiny, tokenizer, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = _trainer(tiny, tokenizer, _rows(4), tmp_path, group_size=3)
    assert isinstance(t.config, GRPOConfig) and t.config.group_size == 3
    with pytest.raises(ConfigError, match="unknown trainer setting.*'groupsize'"):
        _trainer(tiny, tokenizer, _rows(4), tmp_path, groupsize=3)
    with pytest.raises(TypeError, match="a GRPOConfig or a mapping"):
        GRPOTrainer(tiny.model(tokenizer), tokenizer, _rows(4), "regex", 42)
