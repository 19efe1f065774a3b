"""What ``gpu_check.py`` measures on: the two sizes (Qwen2.5-0.5B's shape, and a tiny one for a CPU
rehearsal), a character tokenizer and a random-weight Qwen2 built in memory (nothing is
downloaded), random prompts, and the reward pattern.
"""

from __future__ import annotations

import itertools
import string

FULL = dict(
    hidden=896,
    intermediate=4864,
    layers=24,
    heads=14,
    kv_heads=2,
    vocab=151936,
    group=8,
    prompts=8,
    new_tokens=256,
    prompt_chars=160,
    steps=3,
)
TINY = dict(
    hidden=64,
    intermediate=128,
    layers=2,
    heads=4,
    kv_heads=2,
    vocab=512,
    group=4,
    prompts=2,
    new_tokens=16,
    prompt_chars=40,
    steps=2,
)
# Reward: pass when the completion starts with a vowel (~20% of random text), so most groups
# of 8 have reward variance and every step trains.
PATTERN = r"[aeiouAEIOU].*"


def build_tokenizer(vocab_size: int):
    """Characters first (prompts encode one token per char), then letter strings up to the size."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tokens = ["<pad>", "<eos>", "<unk>"] + list(
        string.ascii_letters + string.digits + string.punctuation + " "
    )
    for n in itertools.count(2):
        if len(tokens) >= vocab_size:
            break
        for combo in itertools.product(string.ascii_lowercase, repeat=n):
            tokens.append("".join(combo))
            if len(tokens) >= vocab_size:
                break
    tok = Tokenizer(models.WordLevel({t: i for i, t in enumerate(tokens)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )


def build_model(size: dict, tokenizer, device):
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    cfg = Qwen2Config(
        vocab_size=size["vocab"],
        hidden_size=size["hidden"],
        intermediate_size=size["intermediate"],
        num_hidden_layers=size["layers"],
        num_attention_heads=size["heads"],
        num_key_value_heads=size["kv_heads"],
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        rope_theta=1e6,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    with torch.device(device):
        model = Qwen2ForCausalLM(cfg)
    return model


def make_prompts(n: int, chars: int) -> list[str]:
    words = (
        "the of a number train has cars each with seats how many people can ride in total"
    ).split()
    out = []
    for i in range(n):
        text = f"Problem {i}: "
        j = i
        while len(text) < chars:
            text += words[j % len(words)] + " "
            j = j * 7 + 3
        out.append(text[:chars] + "? Answer:")
    return out
