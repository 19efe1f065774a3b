"""Which unseen prompts are likely to disagree, learned from their text (``predict_fresh``).

Cold, the curriculum knows nothing of a prompt until it has rolled a whole group on it, so on a
dataset that is mostly solved or out of reach the first pass costs what uniform sampling costs.
But difficulty is rarely random in the text: the source, the format, the number and size of the
quantities, the length. ``SignalModel`` is an online logistic regression from a prompt's text
features to "its first group had signal", trained on every first look (groups on prompts never
seen before, whose choice depends on their features only, so P(signal | features) is learned
without the selection bias that re-drawn prompts carry). Unseen prompts are then ranked by it.

With nothing to learn (features unrelated to difficulty) the weights stay near zero and every
prediction is the population's share of first looks with signal, which is what an unseen prompt
gets without texts. Constant-step SGD keeps following the policy as it moves.

Features are hashed (``zlib.crc32``, the same in every process, so a resumed run predicts what
the original did): word tokens lower-cased, every run of digits replaced by its length class,
their bigrams, and the length classes of the text and of its token count. A prompt's feature
vector has unit norm.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Sequence

import numpy as np

DIM = 1 << 14  # hashed feature buckets
_MASK = DIM - 1
_CACHE = 1 << 17  # prompts whose features are kept; the cache starts over beyond it
MIN_LOOKS = 32  # first looks before the model ranks unseen prompts
STEP = 0.5  # SGD step on the log-loss, per unit-norm feature vector
_TOKEN = re.compile(r"\d+|[^\W\d_]+|[^\w\s]")
_BIAS = "<bias>"


def text_features(text: str) -> np.ndarray:
    """The distinct hashed features of ``text`` (bucket indices, ascending)."""
    tokens = [f"#{min(len(t), 6)}" if t[0].isdigit() else t.lower() for t in _TOKEN.findall(text)]
    grams = [_BIAS, f"<len{len(text).bit_length()}>", f"<tok{len(tokens).bit_length()}>"]
    grams += tokens
    grams += [f"{a} {b}" for a, b in zip(tokens, tokens[1:])]
    return np.array(sorted({zlib.crc32(g.encode()) & _MASK for g in grams}), dtype=np.int64)


def prompt_text(prompt) -> str:
    """The text of a prompt: a string as it is, chat messages as their contents joined."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence):
        return "\n".join(str(m.get("content", "")) for m in prompt if hasattr(m, "get"))
    return str(prompt)


class SignalModel:
    """P(a prompt's first group has signal), from its text; see the module docstring. Used only
    once ``MIN_LOOKS`` first looks trained it (before that an unseen prompt gets the
    population's chance, as without texts)."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = texts
        self.weights = np.zeros(DIM)
        self.bias = 0.0
        self.looks = 0
        self._features: dict[int, np.ndarray] = {}

    @property
    def ready(self) -> bool:
        return self.looks >= MIN_LOOKS

    def features(self, i: int) -> np.ndarray:
        """Prompt ``i``'s features (cached: a draw scores hundreds of prompts)."""
        f = self._features.get(i)
        if f is None:
            if len(self._features) >= _CACHE:
                self._features.clear()
            f = self._features[i] = text_features(self.texts[i])
        return f

    def predict(self, idx: np.ndarray) -> np.ndarray:
        """P(signal) of prompts ``idx`` (row positions into ``texts``)."""
        if not len(idx):
            return np.zeros(0)
        feats = [self.features(i) for i in np.asarray(idx).tolist()]
        sizes = np.fromiter((len(f) for f in feats), np.int64, len(feats))
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        sums = np.add.reduceat(self.weights[np.concatenate(feats)], starts)
        return 1.0 / (1.0 + np.exp(-(self.bias + sums / np.sqrt(sizes))))

    def reorder(self, order: list[int]) -> None:
        """Prompt ``j`` is now the one at ``order[j]`` (a state saved with the ids in another
        order): its text follows it."""
        self.texts = _Reordered(self.texts, order)
        self._features.clear()

    def update(self, i: int, signal: bool) -> None:
        """One SGD step on the log-loss of the first look at prompt ``i``."""
        f = self.features(i)
        x = 1.0 / math.sqrt(len(f))
        g = STEP * (float(signal) - float(self.predict(np.array([i]))[0]))
        self.weights[f] += g * x
        self.bias += g
        self.looks += 1


def signal_model(texts: Sequence | None, n: int, enabled: bool) -> SignalModel | None:
    """The model for ``Curriculum(..., texts=)``: None without texts or when ``enabled`` is
    false. ``texts`` must hold one prompt (a string or chat messages) per prompt id."""
    if texts is None or not enabled:
        return None
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise TypeError(
            f"Curriculum(texts=...) must be a sequence of prompts, one per id, got "
            f"{type(texts).__name__}"
        )
    if len(texts) != n:
        raise ValueError(
            f"Curriculum(texts=...) holds {len(texts)} prompts for {n} prompt ids: give one "
            "text per id, in the same order"
        )
    return SignalModel(_Texts(texts))


class _Texts:
    """The prompts as strings, converted when first read (a million rows cost nothing up front)."""

    def __init__(self, prompts: Sequence) -> None:
        self._prompts = prompts

    def __len__(self) -> int:
        return len(self._prompts)

    def __getitem__(self, i: int) -> str:
        return prompt_text(self._prompts[i])


class _Reordered:
    """``texts`` seen through a permutation: item ``j`` is ``texts[order[j]]``."""

    def __init__(self, texts: Sequence, order: list[int]) -> None:
        self._texts, self._order = texts, order

    def __len__(self) -> int:
        return len(self._order)

    def __getitem__(self, i: int) -> str:
        return self._texts[self._order[i]]
