"""The trainer after the stop-44 review, with a real tiny model and a tokenizer with a chat
template: each case failed on the code before it.

Chat messages stored as JSON text (a CSV cell) were split into characters; a message with no
content, or an SFT row holding only the answer, passed the row check and crashed later (or the
model read "None"); a final assistant message of a prompt was closed and a new turn opened; a
``Reward``'s field mapped to the prompt column read another column; a changed seed on resume
changed every later rollout; a streamed dataset or a DatasetDict gave bare errors; a reward the
workers cannot load warned at every step; a step that trained nothing logged a cost of filtering.
"""

from __future__ import annotations

import json
import re
import warnings

import pytest

from passband.errors import DataError
from passband.trainer import GRPOConfig, GRPOTrainer
from passband.trainer._data import encode_prompt, prompt_of
from passband.trainer._metrics import group_metrics
from passband.trainer._scoring import Scorer
from passband.trainer.alerts import AlertMonitor
from passband.verifiers import Reward, verify_batch

CHAT = (
    "{% for m in messages %}{{ m['role'][0] }}={{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}a={% endif %}"
)
USER = [{"role": "user", "content": "2+2="}]


@pytest.fixture
def chat_tokenizer(tokenizer):
    tokenizer.chat_template = CHAT
    return tokenizer


def _config(tmp_path, name="run", **settings):
    base = dict(
        group_size=4,
        prompts_per_step=2,
        max_new_tokens=4,
        pretrained=False,
        beta=0.0,
        max_steps=1,
        progress=False,
        use_curriculum=False,
        verifier_workers=1,
        output_dir=str(tmp_path / name),
    )
    return GRPOConfig(**{**base, **settings})


def _rows(n=4):
    return [{"prompt": f"{i}+{i}=", "answer": str(2 * i)} for i in range(n)]


@pytest.mark.parametrize("column", ["messages", "prompt"])
def test_chat_messages_written_as_json_text_are_read_as_messages(chat_tokenizer, column):
    row = {column: json.dumps(USER)}
    assert prompt_of(row) == USER
    assert encode_prompt(chat_tokenizer, prompt_of(row)) == encode_prompt(chat_tokenizer, USER)


def test_plain_text_in_a_messages_column_is_a_text_prompt_not_its_characters():
    assert prompt_of({"messages": "2+2="}) == "2+2="
    assert prompt_of({"prompt": "[1, 2] is a list"}) == "[1, 2] is a list"


@pytest.mark.parametrize(
    ("row", "said"),
    [
        (
            {"messages": [{"role": "user", "content": None}]},
            "chat message 0 (user) has no 'content'",
        ),
        ({"messages": [{"role": "user"}]}, "has no 'content'"),
        ({"prompt": [{"content": "hi"}]}, "chat message 0 has no 'role'"),
        ({"messages": [{"role": "assistant", "content": "4"}]}, "no chat message to ask"),
    ],
)
def test_malformed_chat_rows_are_named_before_the_first_rollout(
    tiny, chat_tokenizer, tmp_path, row, said
):
    rows = [*_rows(3), {**row, "answer": "4"}]
    trainer, seen = _refused_then_skipped(tiny, chat_tokenizer, rows, tmp_path, re.escape(said))
    assert len(trainer.rows) == 3 and any("skipping 1 of 4" in str(w.message) for w in seen)


def _refused_then_skipped(tiny, tokenizer, rows, tmp_path, said: str):
    """The DataError naming row 3 (``said``: a pattern after it), then the trainer with
    ``skip_bad_rows`` and the warnings it gave."""
    with pytest.raises(DataError, match="row 3: .*" + said):
        GRPOTrainer(tiny.model(tokenizer), tokenizer, rows, "exact", _config(tmp_path))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        config = _config(tmp_path, "skip", skip_bad_rows=True)
        trainer = GRPOTrainer(tiny.model(tokenizer), tokenizer, rows, "exact", config)
    return trainer, seen


def test_a_final_assistant_message_of_a_prompt_is_continued(chat_tokenizer):
    prefill = [*USER, {"role": "assistant", "content": "the sum is"}]
    text = chat_tokenizer.decode(encode_prompt(chat_tokenizer, prefill))
    assert text.endswith("a=the sum is") and text.count("a=") == 1


def test_a_reward_field_mapped_to_the_prompt_column_reads_the_prompt():
    scorer = Scorer(Reward.from_verifier("exact", {"answer": "prompt"}), workers=1)
    row = {"prompt": "abc", "answer": "zzz"}
    [verdict] = scorer(["abc"], [row], [3])
    assert verdict.status == "ok"


def test_a_changed_seed_on_resume_leaves_the_runs_rollouts_as_they_were(tiny, tokenizer, tmp_path):
    def run(name, **settings):
        config = _config(tmp_path, name, max_steps=4, checkpoint_every=2, use_curriculum=True)
        config = GRPOConfig(**{**config.to_dict(), **settings})
        GRPOTrainer(tiny.model(tokenizer), tokenizer, _rows(8), "exact", config).train()
        return tmp_path / name

    straight = run("straight")
    run("broken", max_steps=2)
    broken = run("broken", resume=True, seed=3)

    def later(out):
        groups = [json.loads(x) for x in (out / "groups.jsonl").read_text().splitlines()]
        return [g["rewards"] for g in groups if g["step"] > 2]

    assert later(broken) == later(straight)
    assert json.loads((broken / "config.json").read_text())["seed"] == 0


def test_streamed_datasets_and_split_dicts_are_refused_by_name(tiny, tokenizer, tmp_path):
    datasets = pytest.importorskip("datasets")
    whole = datasets.Dataset.from_list(_rows())
    for data, said in (
        (
            datasets.DatasetDict({"train": whole}),
            r"DatasetDict of splits \(train\); pass one split",
        ),
        (whole.to_iterable_dataset(), "IterableDataset"),
    ):
        with pytest.raises(DataError, match=said):
            GRPOTrainer(tiny.model(tokenizer), tokenizer, data, "exact", _config(tmp_path))


def test_a_reward_the_workers_cannot_load_warns_once_then_runs_inline():
    def local(completion, **_):  # defined in a test: the worker cannot import it
        return float(completion == "4")

    with pytest.warns(RuntimeWarning, match="said once for this verifier"):
        first = verify_batch(local, ["4", "5"], {}, workers=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = verify_batch(local, ["4", "5"], {}, workers=1)
    assert [v.score for v in first] == [v.score for v in again] == [1.0, 0.0]


class _Group:
    def __init__(self, verdicts, zero_variance):
        self.verdicts, self.zero_variance = verdicts, zero_variance


def test_a_step_that_trained_nothing_logs_no_cost_of_filtering():
    groups = [_Group([0.0] * 4, True), _Group([1.0] * 4, True)]
    assert group_metrics(groups, [], 1)["generate/completions_per_trained"] is None
    assert group_metrics(groups, groups[:1], 1)["generate/completions_per_trained"] == 2.0


def test_the_collapse_alert_does_not_advise_a_curriculum_already_on():
    def advice(extra):
        monitor = AlertMonitor()
        alerts = []
        for _ in range(4):
            alerts += monitor.update({"reward/std": 0.0, "reward/mean": 0.0, **extra})
        [alert] = [a for a in alerts if a.name == "reward_collapse"]
        return alert.message

    assert "enable the curriculum" in advice({})
    on = advice({"curriculum/in_band_share": 0.1})
    assert "enable the curriculum" not in on and "curriculum/*" in on


def test_a_backend_sampling_at_another_temperature_is_refused(tiny, tokenizer, tmp_path):
    from passband.errors import ConfigError
    from passband.trainer import HFRollout

    model = tiny.model(tokenizer)
    backend = HFRollout(model, tokenizer, max_new_tokens=4, temperature=0.3)
    with pytest.raises(ConfigError, match=r"temperature 0.3 \(config 1.0\)"):
        GRPOTrainer(model, tokenizer, _rows(), "exact", _config(tmp_path), rollout_backend=backend)
    same = HFRollout(model, tokenizer, max_new_tokens=4, temperature=1.0)
    GRPOTrainer(model, tokenizer, _rows(), "exact", _config(tmp_path), rollout_backend=same)


def test_a_resume_does_not_say_the_prompts_start_unseen_without_a_word(tiny, tokenizer, tmp_path):
    from passband.trainer.sampling import make_sampler

    lines: list[str] = []
    make_sampler(_rows(), _config(tmp_path, use_curriculum=True, resume=True), log=lines.append)
    assert (
        "start unseen" in lines[0] and "a checkpoint's curriculum state replaces this" in lines[0]
    )


def test_a_missing_messages_cell_is_named_not_a_type_error(tiny, tokenizer, tmp_path):
    rows = [*_rows(3), {"messages": float("nan"), "answer": "4"}]
    with pytest.raises(DataError, match="row 3: the prompt is a float"):
        GRPOTrainer(tiny.model(tokenizer), tokenizer, rows, "exact", _config(tmp_path))


def test_a_conversation_with_a_tool_call_stored_as_json_text_is_read_as_messages():
    chat = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "w"}}]},
        {"role": "tool", "content": "sunny"},
    ]
    assert prompt_of({"prompt": json.dumps(chat)}) == chat


def test_a_row_the_chat_template_fails_on_is_named_and_skippable(tiny, tokenizer, tmp_path):
    """A regression review: any template error refused the whole dataset with no row named,
    and skip_bad_rows could not skip it."""
    tokenizer.chat_template = (
        "{% for m in messages %}{% if loop.index0 % 2 == 1 and m['role'] == 'user' %}"
        "{{ raise_exception('roles must alternate') }}{% endif %}{{ m['content'] }}{% endfor %}"
        "{% if add_generation_prompt %}a={% endif %}"
    )
    bad = {"prompt": [{"role": "user", "content": "1+1="}, {"role": "user", "content": "2+2="}]}
    rows = [
        *(
            {"prompt": [{"role": "user", "content": r["prompt"]}], "answer": r["answer"]}
            for r in _rows(3)
        ),
        {**bad, "answer": "4"},
    ]
    trainer, _ = _refused_then_skipped(
        tiny, tokenizer, rows, tmp_path, "the chat template failed: .*alternate"
    )
    assert len(trainer.rows) == 3
