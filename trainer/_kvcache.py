"""A KV cache that writes each new token in place instead of re-copying the past.

Hugging Face's default ``DynamicCache`` grows by ``torch.cat`` at every decoding step: step t
copies all t cached positions of every layer again, O(T^2) memory traffic per rollout. With a
small model on a CPU that copy was half of ``generate``'s time (torch profiler: ``aten::cat``
52% of a 256-row, 72-token rollout). ``preallocated_cache`` gives the decode loop (``_decode.py``;
formerly ``generate``) a cache whose
full-attention layers own one buffer per layer, sized for the prompt plus ``max_new_tokens``: a
step writes its token's keys and values into the next slot and attends over a view of the filled
part. The arithmetic is the default cache's, so the samples are identical (tests/trainer/
test_speed_generate.py); only the copying goes.

A model with layers of any other kind (sliding windows, linear attention or state-space layers,
whose models may build a cache class of their own) and a transformers without the layered cache
API get ``None``: ``generate`` then builds its default, as before.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["preallocated_cache"]

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


class _InPlaceLayer(DynamicLayer if DynamicLayer is not None else object):
    """A ``DynamicLayer`` backed by a buffer: ``keys`` / ``values`` are views of its filled part.

    Operations generate uses for beams or assisted decoding (``crop``, ``batch_select_indices``,
    ``batch_repeat_interleave``, ``reorder_cache``) run the parent's code on the views and then
    move the result into a fresh buffer, so the layer stays consistent whatever is called.
    """

    def __init__(self, capacity: int, **kwargs):
        super().__init__(**kwargs)
        self.capacity = max(int(capacity), 1)
        self.length = 0

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        self.dtype, self.device = key_states.dtype, key_states.device
        self._k = self._v = None
        self.is_initialized = True

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        end = self.length + key_states.shape[-2]
        if self._k is None or end > self._k.shape[-2]:
            self._grow(key_states, value_states, end)
        self._k[:, :, self.length : end] = key_states  # [b, h, new, d] into its slots
        self._v[:, :, self.length : end] = value_states
        self.length = end
        self.keys, self.values = self._k[:, :, :end], self._v[:, :, :end]
        return self.keys, self.values

    def _grow(self, key_states: torch.Tensor, value_states: torch.Tensor, end: int) -> None:
        size = max(self.capacity, end, 2 * (self._k.shape[-2] if self._k is not None else 0))
        k = key_states.new_empty((*key_states.shape[:-2], size, key_states.shape[-1]))
        v = value_states.new_empty((*value_states.shape[:-2], size, value_states.shape[-1]))
        if self._k is not None and self.length:
            k[:, :, : self.length] = self._k[:, :, : self.length]
            v[:, :, : self.length] = self._v[:, :, : self.length]
        self._k, self._v = k, v

    def get_seq_length(self) -> int:
        return self.length if self.is_initialized else 0

    def reset(self) -> None:
        super().reset()
        self._k = self._v = None
        self.length = 0

    def _adopt(self) -> None:
        """After a parent operation replaced ``keys`` / ``values``: buffer them again."""
        keys, values = self.keys, self.values
        self._k = self._v = None
        self.length = 0
        if keys is not None and keys.numel():
            self.update(keys, values)

    def crop(self, tokens_to_remove: int) -> None:
        super().crop(tokens_to_remove)
        self._adopt()

    def batch_repeat_interleave(self, repeats: int) -> None:
        super().batch_repeat_interleave(repeats)
        self._adopt()

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        super().batch_select_indices(indices)
        self._adopt()

    def reorder_cache(self, beam_idx: torch.LongTensor) -> None:
        super().reorder_cache(beam_idx)
        self._adopt()
