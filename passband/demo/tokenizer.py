"""A character-level tokenizer that is a real ``transformers`` tokenizer.

Built as a ``PreTrainedTokenizerFast`` over a ``tokenizers`` word-level model whose pre-tokenizer
splits every character, so ``save_pretrained`` writes a plain ``tokenizer.json`` and
``AutoTokenizer.from_pretrained`` (or TRL, or vLLM) loads it back with no custom code. One
character is one token, which keeps the demo model tiny and its outputs easy to read.
"""

from __future__ import annotations

__all__ = ["CHARS", "build_tokenizer"]

# Everything the demo prompts and answers can contain. Special tokens come first so their ids are
# stable: pad 0, eos 1, unk 2.
CHARS = "0123456789+-*=() "
_SPECIALS = ("<pad>", "<eos>", "<unk>")


def build_tokenizer(chars: str = CHARS):
    """A fast tokenizer with one token per character of ``chars`` plus pad/eos/unk.

    Left padding, because generation appends to the right end of every row.
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    if len(set(chars)) != len(chars):
        raise ValueError(f"chars must not repeat characters, got {chars!r}")
    vocab = {tok: i for i, tok in enumerate(_SPECIALS)}
    for ch in chars:
        vocab[ch] = len(vocab)
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    backend.decoder = decoders.Fuse()  # join characters back without spaces
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token="<pad>",
        eos_token="<eos>",
        unk_token="<unk>",
        padding_side="left",
        model_max_length=64,
    )
    return tokenizer
