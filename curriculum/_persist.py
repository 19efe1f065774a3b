"""Saving and restoring the curriculum: ``state_dict()`` / ``load_state_dict()`` of ``Curriculum``.

The per-prompt arrays go through ``_state`` (compressed, JSON-safe); the pools, re-test queues,
random generator, counters and running statistics are stored as they are, so a restored sampler
continues exactly as the original would have.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import asdict

import numpy as np

from passband.curriculum import _state as codec
from passband.curriculum._ids import build_index, jsonable
from passband.curriculum._pools import IndexSet

STATE_FORMAT = "passband.curriculum/2"
COUNTERS = (
    "groups_observed",
    "groups_with_signal",
    "probes",
    "admissions",
    "readmissions",
    "retests",
    "retests/warmup",
    "retests/easy",
    "to_warmup",
    "to_easy",
    "parked",
    "priors/used",
    "priors/unused",
    "drawn/active",
    "drawn/fresh",
    "drawn/retest_warmup",
    "drawn/retest_easy",
    "drawn/fallback",
    "drawn/repeat",
)
FLOATS = ("succ", "fail", "stamp", "wait", "due")  # the per-prompt float arrays, as ``_<name>``


class PersistMixin:
    """The state methods of ``Curriculum``; not usable on its own."""

    def state_dict(self) -> dict:
        """Everything needed to continue exactly where this left off: JSON-safe, with the
        per-prompt arrays compressed (a few MB at a million prompts)."""
        arrays = {name: codec.encode(getattr(self, f"_{name}")) for name in FLOATS}
        arrays["pool"], arrays["observed"] = codec.encode(self._pool), codec.encode(self._observed)
        sets = [codec.encode(np.asarray(s.members, dtype=np.int64)) for s in self._sets]
        queues = {
            str(code): {
                "heap": codec.encode(np.asarray(q.heap, dtype=np.float64).reshape(-1, 2)),
                "due": codec.encode(np.asarray(q.due.members, dtype=np.int64)),
            }
            for code, q in self._queues.items()
        }
        return {
            "format": STATE_FORMAT,
            "config": jsonable(asdict(self.config)),
            "ids": codec.encode_ids(self._ids),
            "arrays": arrays,
            "sets": sets,
            "queues": queues,
            "clock": self._clock,
            "rng": self._rng.bit_generator.state,
            "n_hint": self._n_hint,
            "n_seen": self._n_seen,
            "group_size": self._group_size,
            "pending": [[i, c] for i, c in self._pending.items()],
            "counts": dict(self._counts),
            "ema": dict(self._ema),
            "predictor": _model_state(self._predictor),
        }

    def load_state_dict(self, state: Mapping) -> None:
        """Restore a ``state_dict()``; the prompt ids must be the same set as this sampler's."""
        if state.get("format") != STATE_FORMAT:
            raise ValueError(
                f"not a curriculum state (format {state.get('format')!r}, "
                f"expected {STATE_FORMAT!r})"
            )
        ids = codec.decode_ids(state["ids"])
        if len(ids) != len(self._ids) or set(ids) != set(self._ids):
            missing, extra = set(self._ids) - set(ids), set(ids) - set(self._ids)
            raise ValueError(
                f"curriculum state is for other prompts: {len(missing)} of ours are "
                f"missing from it, {len(extra)} of its are unknown here"
            )
        changed = [
            k for k, v in jsonable(asdict(self.config)).items() if state["config"].get(k) != v
        ]
        if changed:
            warnings.warn(
                f"resuming curriculum with changed settings {changed}; using the new ones",
                stacklevel=2,
            )
        if ids != self._ids:
            self._ids, self._index = ids, build_index(ids)
        n = len(ids)
        for name in FLOATS:
            setattr(self, f"_{name}", codec.decode(state["arrays"][name]).astype(np.float64))
        self._pool = codec.decode(state["arrays"]["pool"]).astype(np.int8)
        self._observed = codec.decode(state["arrays"]["observed"]).astype(np.int64)
        self._sets = [IndexSet(n, codec.decode(blob)) for blob in state["sets"]]
        for code, q in self._queues.items():
            saved = state["queues"][str(code)]
            q.heap = [(float(w), int(i)) for w, i in codec.decode(saved["heap"]).reshape(-1, 2)]
            q.due = IndexSet(n, codec.decode(saved["due"]))
        self._rng.bit_generator.state = state["rng"]
        self._clock, self._n_hint, self._n_seen = state["clock"], state["n_hint"], state["n_seen"]
        self._group_size = state["group_size"]
        self._pending = {int(i): c for i, c in state["pending"]}
        self._counts = {name: 0 for name in COUNTERS}
        self._counts.update(state["counts"])
        self._ema = dict(state["ema"])
        _load_model(self._predictor, state.get("predictor"))


def _model_state(model) -> dict | None:
    if model is None:
        return None
    return {"weights": codec.encode(model.weights), "bias": model.bias, "looks": model.looks}


def _load_model(model, saved) -> None:
    """Restore the text model (``_predict``); a state without one starts it afresh."""
    if model is None:
        if saved:
            warnings.warn(
                "the curriculum state has a text model of unseen prompts (it was built with "
                "texts=); this Curriculum has no texts, so unseen prompts are drawn uniformly",
                stacklevel=3,
            )
        return
    model.weights = codec.decode(saved["weights"]) if saved else np.zeros_like(model.weights)
    model.bias, model.looks = (saved["bias"], saved["looks"]) if saved else (0.0, 0)
