"""A KV cache that writes each new token in place instead of re-copying the past.

Hugging Face's default ``DynamicCache`` grows by ``torch.cat`` at every decoding step: step t
copies all t cached positions of every layer again, O(T^2) memory traffic per rollout. With a
small model on a CPU that copy was half of ``generate``'s time (torch profiler: ``aten::cat``
52% of a 256-row, 72-token rollout). ``preallocated_cache`` gives the decode loop (``_decode.py``)
a cache whose full-attention layers own one contiguous buffer per layer: a step writes its
token's keys and values into the next slot, and the buffer grows ``CHUNK`` positions at a time
(up to the prompt plus ``max_new_tokens``), so the copying happens once per chunk, not per step.
Where HF builds the mask, attention reads the whole buffer, its unfilled tail masked as padding
(HF's CPU attention copies a strided view of the filled part first, which cost more than the
tail). On a CPU the decode loop passes a mask as long as the filled part instead, and
``_attention.py`` reads just that part in place.
Masked positions add exact zeros, so the samples are the default cache's
(tests/trainer/test_speed_generate.py; the cut attention of a CPU decode step sums over fewer
positions, so it matches to rounding).

A model with layers of any other kind (sliding windows, linear attention or state-space layers,
whose models may build a cache class of their own) and a transformers without the layered cache
API get ``None``: ``generate`` then builds its default, as before.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["preallocated_cache", "in_place", "CHUNK"]

CHUNK = 32  # positions a buffer grows by

try:  # the layered cache API (transformers >= 4.56)
    from transformers.cache_utils import DynamicCache, DynamicLayer
except ImportError:  # pragma: no cover - older transformers: generate's default cache
    DynamicCache = DynamicLayer = None


def preallocated_cache(model, capacity: int) -> Any | None:
    """A ``DynamicCache`` for ``model`` whose layers write in place into buffers of ``capacity``
    positions (they grow, by doubling, if a step ever needs more); ``None`` unless every layer of
    the cache ``generate`` would build is a plain full-attention ``DynamicLayer``."""
    if DynamicCache is None:
        return None
    config = getattr(model, "config", None)
    try:
        cache = DynamicCache(config=config) if config is not None else None
    except Exception:  # a config the cache cannot read: generate's default
        return None
    layers = getattr(cache, "layers", None)
    if not layers or getattr(cache, "offloading", False):
        return None
    if any(type(layer) is not DynamicLayer for layer in layers):
        return None  # sliding-window, hybrid or custom layers: generate's own cache
    cache.layers = [_InPlaceLayer(capacity) for _ in layers]
    return cache


def in_place(cache) -> bool:
    """Whether ``cache`` is one ``preallocated_cache`` made: every layer full attention, in place."""
    layers = getattr(cache, "layers", None)
    return bool(layers) and all(isinstance(layer, _InPlaceLayer) for layer in layers)


class _InPlaceLayer(DynamicLayer if DynamicLayer is not None else object):
    """A ``DynamicLayer`` backed by one contiguous buffer per tensor, grown ``CHUNK`` positions at a
    time up to ``capacity`` (further only if a step needs it).

    ``update`` returns the whole buffer, and ``get_mask_sizes`` reports its length, so a mask the
    model builds covers the unfilled tail as padding (masked out; the tail holds zeros, never
    garbage). A CPU decode step passes a mask of the filled length instead, and attention reads
    only that part, in place (``_decode._takes_ready_mask``). HF's own CPU attention over a strided
    view of the filled part ran 2.5x slower than over the contiguous buffer (it copies the view
    first), which cost more than the at most ``CHUNK - 1`` masked positions.

    ``batch_select_indices`` gathers the rows of the buffers themselves. The other operations
    generate uses for beams or assisted decoding (``crop``, ``batch_repeat_interleave``,
    ``reorder_cache``) run the parent's code on the filled part and
    then move the result into a fresh buffer, so the layer stays consistent whatever is called.
    """

    def __init__(self, capacity: int, **kwargs):
        super().__init__(**kwargs)
        self.capacity = max(int(capacity), 1)
        self.length = 0
        self._k = self._v = None

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        self.dtype, self.device = key_states.dtype, key_states.device
        self._k = self._v = None
        self.is_initialized = True

    def _span(self, end: int) -> int:
        """The buffer length that holds ``end`` positions: the current one if it is enough, else
        the next multiple of ``CHUNK`` (at most ``capacity``, unless ``end`` itself is more)."""
        have = self._k.shape[-2] if self._k is not None else 0
        if end <= have:
            return have
        return max(end, min(-(-end // CHUNK) * CHUNK, self.capacity))

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        end = self.length + key_states.shape[-2]
        if self._k is None or end > self._k.shape[-2]:
            self._grow(key_states, value_states, self._span(end))
        self._k[:, :, self.length : end] = key_states  # [b, h, new, d] into its slots
        self._v[:, :, self.length : end] = value_states
        first, self.length = self.length == 0, end
        if first:  # the prefill attends over exactly what it wrote (see get_mask_sizes)
            self.keys, self.values = self._k[:, :, :end], self._v[:, :, :end]
        else:  # [b, h, span, d]: contiguous, the unfilled tail masked as padding
            self.keys, self.values = self._k, self._v
        return self.keys, self.values

    def _grow(self, key_states: torch.Tensor, value_states: torch.Tensor, size: int) -> None:
        k = key_states.new_zeros((*key_states.shape[:-2], size, key_states.shape[-1]))
        v = value_states.new_zeros((*value_states.shape[:-2], size, value_states.shape[-1]))
        if self._k is not None and self.length:
            k[:, :, : self.length] = self._k[:, :, : self.length]
            v[:, :, : self.length] = self._v[:, :, : self.length]
        self._k, self._v = k, v

    def get_mask_sizes(self, query_length: int, *args) -> tuple[int, int]:
        """The key length attention sees after this step's ``update``: the whole buffer, except
        in the prefill. There the filled part only: with a tail, HF's mask builder would drop
        the mask of a one-token, unpadded prompt (its static-cache shortcut) and attend to it."""
        if self.length == 0:
            return query_length, 0
        return self._span(self.length + query_length), 0

    def get_seq_length(self) -> int:
        return self.length if self.is_initialized else 0

    def reset(self) -> None:
        super().reset()
        self._k = self._v = None
        self.length = 0

    def _filled(self) -> None:
        """Point ``keys`` / ``values`` at the filled part, for a parent operation to work on."""
        if self._k is not None:
            self.keys, self.values = self._k[:, :, : self.length], self._v[:, :, : self.length]

    def _adopt(self) -> None:
        """After a parent operation replaced ``keys`` / ``values``: buffer them again."""
        keys, values = self.keys, self.values
        self._k = self._v = None
        self.length = 0
        if keys is not None and keys.numel():
            self.update(keys, values)

    def crop(self, tokens_to_remove: int) -> None:
        self._filled()
        super().crop(tokens_to_remove)
        self._adopt()

    def batch_repeat_interleave(self, repeats: int) -> None:
        self._filled()
        super().batch_repeat_interleave(repeats)
        self._adopt()

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        """Keep (or repeat) the rows ``indices``: one gather of the buffers, which keep their
        length, so the next step need not grow them again (the decode loop drops finished rows
        and copies a prompt's prefill to its group's rows this way)."""
        if self._k is None:
            return
        self._k, self._v = self._k[indices], self._v[indices]
        self._filled()

    def reorder_cache(self, beam_idx: torch.LongTensor) -> None:
        self._filled()
        super().reorder_cache(beam_idx)
        self._adopt()
