"""Tiny real models and tokenizers built in memory (no downloads) for the trainer tests."""

from __future__ import annotations

import pytest

CHARS = list("0123456789+-*=()?. abcdefghijklmnopqrstuvwxyz\n#")
SPECIALS = ["<pad>", "<eos>", "<unk>"]


def make_tokenizer():
    """Character-level WordLevel tokenizer wrapped as a fast HF tokenizer."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(SPECIALS + CHARS)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )


def make_model(tokenizer, seed: int = 0, layers: int = 2, hidden: int = 32):
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    return Qwen2ForCausalLM(config).eval()


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    """Tiny models gain nothing from threads; on 2 shared cores extra threads only contend."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def tokenizer():
    return make_tokenizer()


@pytest.fixture
def tiny_model(tokenizer):
    return make_model(tokenizer)


def write_run_setup(root, config_template: str):
    """A saved tiny model, a 12-row pattern dataset and ``run.toml`` (``{root}`` filled in) under root."""
    import json
    from pathlib import Path

    root = Path(root)
    tokenizer = make_tokenizer()
    model = make_model(tokenizer, seed=1)
    model.save_pretrained(root / "model")
    tokenizer.save_pretrained(root / "model")
    rows = [
        {"prompt": f"{i}*{i % 7}=", "pattern": f"(?s).*[{i % 10}{(i + 3) % 10}ab].*"}
        for i in range(12)
    ]
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = root / "run.toml"
    cfg.write_text(config_template.format(root=root.as_posix()))
    return cfg


class _Factories:
    """Tests cannot import conftest under --import-mode=importlib; they get these via a fixture."""

    tokenizer = staticmethod(make_tokenizer)
    model = staticmethod(make_model)
    run_setup = staticmethod(write_run_setup)


@pytest.fixture(scope="session")
def tiny():
    return _Factories
