"""Training rows, checked up front: a ``datasets.Dataset`` or a list of dicts with ``prompt``/``messages``.

Every row is checked before the first rollout, not when it is first sampled: a null or empty
prompt, a prompt that is neither text nor chat messages, a reference column the reward reads that
the row lacks or holds null, and a prompt that leaves no room for ``max_new_tokens`` in the
model's positions. Unusable rows raise one ``DataError`` that counts them and names the first few;
``skip_bad_rows = true`` drops them instead, saying how many. A prompt too long for the model is
refused by default, or with ``prompt_overflow = "truncate"`` keeps its last tokens (text prompts).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from passband.errors import ConfigError, DataError, first_few

__all__ = [
    "as_rows",
    "check_rows",
    "check_scorable",
    "prompt_of",
    "encode_prompt",
    "model_positions",
]


def as_rows(dataset) -> tuple[Any, list[str]]:
    kind = type(dataset).__name__
    if kind in ("DatasetDict", "IterableDatasetDict"):
        raise DataError(
            f"train_dataset is a {kind} of splits ({', '.join(map(str, dataset))}); pass one "
            "split, e.g. dataset['train']"
        )
    if kind == "IterableDataset":
        raise DataError(
            "train_dataset is an IterableDataset (streamed): the curriculum and the row checks "
            "need every row up front; load it without streaming=True, or pass list(dataset)"
        )
    if hasattr(dataset, "column_names"):  # datasets.Dataset: rows are read on demand
        rows, columns = dataset, list(dataset.column_names)
    else:
        rows = list(dataset)
        if rows and not all(isinstance(r, Mapping) for r in rows):
            raise DataError("train_dataset must be a datasets.Dataset or a list of dicts")
        columns = list(rows[0]) if rows else []
    if len(rows) == 0:
        raise DataError("train_dataset is empty")
    if "prompt" not in columns and "messages" not in columns:
        raise DataError(
            "train_dataset needs a 'prompt' column (text or chat messages) or a "
            f"'messages' column; its columns are: {', '.join(columns)}"
        )
    return rows, columns


def check_rows(dataset, scorer, tokenizer, model, config) -> tuple[list, list[int], dict]:
    """The usable training rows (all of them, unless ``config.skip_bad_rows``), the position of
    each in ``dataset``, and the original prompt of each that ``prompt_overflow = "truncate"``
    shortened (by kept position: the data a resume must match); see the module doc."""
    rows, columns = as_rows(dataset)
    limit = _prompt_budget(model, config)
    originals: dict[int, Any] = {}  # dataset position -> the prompt before truncation
    rows = [dict(rows[i]) for i in range(len(rows))]
    problems = reference_problems(rows, columns, scorer)
    texts = _rendered(rows, problems, tokenizer)  # a template that fails on a row names that row
    if limit is not None:
        fine = [i for i in range(len(rows)) if i not in problems]
        counts = _token_counts(tokenizer, [texts[i] for i in fine], limit)
        for i, n in zip(fine, counts):
            if n <= limit:
                continue
            before = prompt_of(rows[i])
            if p := _fit_prompt(rows[i], tokenizer, limit, config.prompt_overflow):
                problems[i] = p
            else:
                originals[i] = before
    kept = [i for i in range(len(rows)) if i not in problems]
    good = [rows[i] for i in kept]
    problems = [f"row {i}: {p}" for i, p in sorted(problems.items())]
    if problems:
        said = first_few(problems)
        if not config.skip_bad_rows or not good:
            raise _unusable(problems, len(rows))
        warnings.warn(
            f"skipping {len(problems)} of {len(rows)} unusable training rows "
            f"(skip_bad_rows = true): {said}. priors= keys stay dataset positions; the prompt "
            "ids of groups.jsonl and of the curriculum count the kept rows",
            stacklevel=2,
        )
    return good, kept, {new: originals[old] for new, old in enumerate(kept) if old in originals}


def check_scorable(dataset, scorer, skip_bad_rows: bool) -> None:
    """What ``check_rows`` refuses without a tokenizer or a model: a reference column the
    dataset lacks, and rows with a null prompt or reference (all of them, or any without
    ``skip_bad_rows``). ``passband train`` asks it before it loads the model."""
    rows, columns = as_rows(dataset)
    problems = reference_problems(rows, columns, scorer)
    if problems and (not skip_bad_rows or len(problems) == len(rows)):
        raise _unusable([f"row {i}: {p}" for i, p in sorted(problems.items())], len(rows))


def reference_problems(rows, columns: list[str], scorer) -> dict[int, str]:
    """Row position -> why the row cannot be asked or scored (its prompt, or a reference column
    the reward reads that it lacks or holds null); ``DataError`` when a reference column the
    reward is mapped to is not in the dataset at all."""
    try:
        scorer.check_columns(columns)
    except ValueError as exc:
        raise DataError(str(exc)) from None
    needed = _reference_columns(scorer)
    return {i: p for i in range(len(rows)) if (p := _row_problem(rows[i], needed))}


def _unusable(problems: list[str], total: int) -> DataError:
    return DataError(
        f"{len(problems)} of {total} training rows are unusable: {first_few(problems)}. "
        "Fix them, or set skip_bad_rows = true to train on the rest"
    )


def _rendered(rows: list, problems: dict, tokenizer) -> dict:
    """Row position -> (text, specials) of each row without a problem yet, through the chat
    template; a row the template fails on becomes a problem (``DataError``'s text)."""
    texts = {}
    for i, row in enumerate(rows):
        if i in problems:
            continue
        try:
            texts[i] = _prompt_text(tokenizer, prompt_of(row))
        except DataError as exc:
            problems[i] = str(exc)
    return texts


def _reference_columns(scorer) -> list[str]:
    """Columns the reward reads by name: explicit references, a ``Reward``'s field map, or the
    keywords a verifier (by name) or callable requires (``math`` and ``exact`` need ``answer``)."""
    if scorer.references is not None:
        return list(scorer.references.values())
    fields = getattr(scorer.reward, "fields", None)  # a Reward maps its fields itself
    if isinstance(fields, Mapping):
        return list(fields.values())
    return _required_keywords(scorer.reward)


def _required_keywords(reward) -> list[str]:
    """The reference fields ``reward`` cannot do without: those it declares (``reference_fields``),
    else its keyword arguments without a default, after the completion."""
    import inspect

    from passband.verifiers import Reward, get
    from passband.verifiers._from_trl import adapted

    if isinstance(reward, Reward):
        return []  # each term takes the fields it accepts; a missing one is an error verdict
    try:
        fn = get(reward) if isinstance(reward, str) else reward
        fn = adapted(fn)  # a TRL reward function: its columns, not its batch's
        declared = getattr(fn, "reference_fields", None)  # e.g. ("answer",) on math and exact
        if isinstance(declared, (tuple, list)) and all(isinstance(x, str) for x in declared):
            return list(declared)
        params = list(inspect.signature(fn).parameters.values())
    except (KeyError, TypeError, ValueError):
        return []
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [
        p.name
        for p in params[1:]
        if p.kind in named and p.default is inspect.Parameter.empty and p.name != "num_tokens"
    ]


def _row_problem(row: Mapping[str, Any], needed: list[str]) -> str | None:
    if row.get("prompt") is None and row.get("messages") is None:
        # the CLI copies [data] prompt_column into 'prompt': name that one too
        nulls = [repr(k) for k, v in row.items() if v is None and k not in ("prompt", "messages")]
        also = f"; null in this row: {', '.join(nulls)}" if nulls else ""
        return f"the prompt is null (no 'prompt' or 'messages' value{also})"
    if not isinstance(row.get("prompt"), (str, list, tuple, type(None))):
        return _not_a_prompt(row["prompt"])
    prompt = prompt_of(row)  # what is rendered: a final assistant answer dropped, JSON text read
    if isinstance(prompt, str):
        if not prompt.strip():
            return "the prompt is empty"
    elif not isinstance(prompt, (list, tuple)):
        return _not_a_prompt(prompt)
    elif problem := _chat_problem(prompt):
        return problem
    for column in needed:
        if column not in row:
            return f"lacks the reference column {column!r}"
        if row[column] is None:
            return f"reference column {column!r} is null"
    return None


def _not_a_prompt(prompt) -> str:
    return (
        f"the prompt is a {type(prompt).__name__}; give text or a list of chat messages "
        "({'role': ..., 'content': ...})"
    )


def _chat_problem(messages) -> str | None:
    """Why chat messages cannot be rendered as a prompt, or None: none left once an SFT row's
    final assistant answer is dropped, a message that is no dict, has no role, or whose content
    is neither text nor a list of parts (``None`` rendered as "None", or crashed a template)."""
    if not messages:
        return "no chat message to ask (a messages row holding only the assistant's answer?)"
    for k, m in enumerate(messages):
        if not isinstance(m, Mapping):
            return f"chat message {k} is a {type(m).__name__}, not a {{'role', 'content'}} dict"
        if not isinstance(m.get("role"), str) or not m["role"]:
            return f"chat message {k} has no 'role'"
        content = m.get("content")
        if not isinstance(content, (str, list)) and not (content is None and m.get("tool_calls")):
            what = (
                "no 'content'" if content is None else f"content of type {type(content).__name__}"
            )
            return f"chat message {k} ({m['role']}) has {what}"
    return None


def model_positions(model) -> int | None:
    """How many positions (prompt + completion tokens) the model can attend over, if it says."""
    cfg = getattr(model, "config", None)
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(cfg, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def _prompt_budget(model, config) -> int | None:
    positions = model_positions(model)
    if positions is None:
        return None
    if config.max_new_tokens >= positions:
        raise ConfigError(
            f"GRPOConfig.max_new_tokens = {config.max_new_tokens} leaves no room for "
            f"a prompt: the model has {positions} positions (prompt + completion); "
            f"set max_new_tokens below {positions}"
        )
    return positions - config.max_new_tokens


def encode_prompt(tokenizer, prompt) -> list[int]:
    """Token ids of one prompt; chat messages go through the tokenizer's chat template."""
    text, specials = _prompt_text(tokenizer, prompt)
    ids = tokenizer(text, add_special_tokens=specials)["input_ids"]
    if not ids:
        raise DataError(f"prompt {str(prompt)[:80]!r} encodes to zero tokens")
    return list(ids)


def _prompt_text(tokenizer, prompt) -> tuple[str, bool]:
    """(text to tokenize, whether the tokenizer adds its special tokens)."""
    if isinstance(prompt, str):
        return prompt, True
    if getattr(tokenizer, "chat_template", None):
        from jinja2 import TemplateError

        messages = list(prompt)
        # a final assistant message in a prompt is a prefill the model continues (as TRL reads
        # it), not a finished turn followed by a new one
        prefill = isinstance(messages[-1], Mapping) and messages[-1].get("role") == "assistant"
        try:
            text = tokenizer.apply_chat_template(
                messages,
                add_generation_prompt=not prefill,
                continue_final_message=prefill,
                tokenize=False,
            )
        except (ValueError, TypeError, KeyError, TemplateError) as exc:
            what = (
                "cannot continue its final assistant message (a prefill)" if prefill else "failed"
            )
            raise DataError(f"the chat template {what}: {str(exc)[:200]}") from None
        return text, False
    raise DataError(
        "the dataset gives chat messages but the tokenizer has no chat "
        "template; give a 'prompt' text column or a tokenizer with one"
    )


# No tokenizer in use packs more than this many characters into one token on real text, so a
# prompt whose first (limit + 1) * _CHARS characters already exceed the limit is too long: a 10 MB
# prompt is judged from a prefix instead of being tokenized whole (gigabytes of offsets).
_CHARS = 32


# Byte-level BPE, SentencePiece (byte fallback plus a word marker) and WordPiece all give at most
# two tokens per UTF-8 byte, plus a few special tokens: a prompt under that bound fits unseen.
def _token_bound(text: str) -> int:
    return 2 * len(text.encode("utf-8")) + 16


def _is_rendered(p) -> bool:
    return isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) and type(p[1]) is bool


def _token_counts(tokenizer, prompts: list, limit: int) -> list[int]:
    """Each prompt's length in tokens (an upper bound when that already fits), or a number above
    ``limit`` when it is certainly longer; a prompt may come rendered, ``(text, specials)``.
    Tokenized in batches: one call per prompt costs more than the tokenizing itself."""
    texts = [p if _is_rendered(p) else _prompt_text(tokenizer, p) for p in prompts]
    counts = [_token_bound(text) for text, _ in texts]  # a count at or under the limit fits
    unsure = [i for i, n in enumerate(counts) if n > limit]
    heads = {i: texts[i][0][: (limit + 1) * _CHARS] for i in unsure}
    for specials in (True, False):
        idx = [i for i in unsure if texts[i][1] is specials]
        for start in range(0, len(idx), 512):
            chunk = idx[start : start + 512]
            ids = tokenizer([heads[i] for i in chunk], add_special_tokens=specials)["input_ids"]
            for i, one in zip(chunk, ids):
                counts[i] = len(one)
    for i in unsure:
        text, specials = texts[i]
        # margin: the cut may split a word into pieces; a long text below it is counted whole
        if len(heads[i]) < len(text) and counts[i] <= limit + 8:
            counts[i] = len(tokenizer(text, add_special_tokens=specials)["input_ids"])
    return counts


def _fit_prompt(row: dict, tokenizer, limit: int, overflow: str) -> str | None:
    """None when the prompt fits ``limit`` tokens (truncating a text prompt if asked), else why."""
    prompt = prompt_of(row)
    if _token_counts(tokenizer, [prompt], limit)[0] <= limit:
        return None
    too_long = (
        f"the prompt has more than {limit} tokens, the room the model's positions leave "
        "after max_new_tokens"
    )
    if overflow != "truncate":
        return too_long + '; shorten it or set prompt_overflow = "truncate"'
    if not isinstance(prompt, str):
        return too_long + ' (prompt_overflow = "truncate" works on text prompts, not messages)'
    tail = tokenizer(prompt[-(limit + 1) * _CHARS :], add_special_tokens=False)["input_ids"]
    for keep in range(limit - 4, 0, -max(1, limit // 8)):  # decode + re-encode may add a token
        text = tokenizer.decode(tail[-keep:], skip_special_tokens=True)
        if _token_counts(tokenizer, [text], limit)[0] <= limit:
            row["prompt"] = text  # the end of the prompt (where the question is) is kept
            return None
    return too_long + " and could not be truncated to fit"


def prompt_of(row: Mapping[str, Any]):
    """What the model is asked: ``prompt`` as it is, else ``messages`` without a final assistant
    message (the reference answer of SFT data; ``asked_messages``). Chat messages stored as JSON
    text (a CSV cell) are read as messages (``as_chat``)."""
    from passband.verifiers._from_trl import as_chat, asked_messages

    if row.get("prompt") is not None:
        return as_chat(row["prompt"])
    return asked_messages(row["messages"])
