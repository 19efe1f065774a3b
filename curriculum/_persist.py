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
from passband.curriculum._pools import EASY, FRESH, WARMUP, IndexSet, first_wait

STATE_FORMAT = "passband.curriculum/2"
COUNTERS = (
    "groups_observed",
    "unscored",
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
                "heap": codec.encode(q.entries()),
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
            "n_hint": int(self._n_hint),
            "n_window": int(self._n_window),
            "n_max": int(self._n_max),
            "draws": self._draws,
            "n_seen": self._n_seen,
            "group_size": int(self._group_size),
            "group_sizes": {str(g): k for g, k in self._sizes.items()},
            "pending": [[i, c, d] for i, (c, d) in self._pending.items()],
            "counts": dict(self._counts),
            "ema": dict(self._ema),
            "predictor": _model_state(self._predictor),
        }

    def load_state_dict(self, state: Mapping) -> None:
        """Restore a ``state_dict()``; the prompt ids must be the same set as this sampler's.
        Settings that differ from the saved ones apply from here on: under another ``band`` every
        seen prompt moves to the pool its estimate now gives, under another
        ``group_size_hint`` that is the group size until groups of a size are observed. Nothing
        changes unless the whole state reads back."""
        if not isinstance(state, Mapping) or state.get("format") != STATE_FORMAT:
            found = state.get("format") if isinstance(state, Mapping) else type(state).__name__
            raise ValueError(
                f"not a curriculum state (format {found!r}, expected {STATE_FORMAT!r})"
            )
        ids = codec.decode_ids(state["ids"])
        if len(ids) != len(self._ids) or set(ids) != set(self._ids):
            missing, extra = set(self._ids) - set(ids), set(ids) - set(self._ids)
            raise ValueError(
                f"curriculum state is for other prompts: {len(missing)} of ours are "
                f"missing from it, {len(extra)} of its are unknown here"
            )
        try:
            new = _decoded(state, len(ids))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ValueError(f"curriculum state is damaged or incomplete: {exc!r}") from None
        changed = [
            k for k, v in jsonable(asdict(self.config)).items() if state["config"].get(k) != v
        ]
        if changed:
            warnings.warn(
                f"resuming curriculum with changed settings {changed}; using the new ones",
                stacklevel=2,
            )
        if ids != self._ids:  # the state's order: its arrays, sets and draws follow it
            order = [self._index[pid] for pid in ids]
            self._ids, self._index = ids, build_index(ids)
            if self._predictor is not None:
                self._predictor.reorder(order)
        queues = new.pop("_queue_contents")
        for name, value in new.items():
            setattr(self, name, value)
        for code, (heap, due) in queues.items():
            self._queues[code].rebuild([w for w, _ in heap], [i for _, i in heap])
            self._queues[code].due = due
        self._rng.bit_generator.state = state["rng"]
        self._counts = {name: 0 for name in COUNTERS}
        self._counts.update(state["counts"])
        _load_model(self._predictor, state.get("predictor"))
        if "group_size_hint" in changed:
            self._group_size, self._sizes = self.config.group_size_hint, {}
        if "band" in changed:
            self._repool()

    def _repool(self) -> None:
        """Move every seen prompt to the pool its estimate gives under the current band (a
        resume under another band); one that changes pool starts that pool's first wait."""
        for i in np.flatnonzero(self._pool != FRESH).tolist():  # every prompt seen
            old, new = int(self._pool[i]), self._pool_for(i)
            if new == old:
                continue
            self._set_pool(i, old, new)
            if new in self._queues:
                self._wait[i] = first_wait(self.config, warmup=new == WARMUP)
                self._due[i] = self._clock + self._wait[i]
                self._queues[new].schedule(i, self._due[i])


def _decoded(state: Mapping, n: int) -> dict:
    """Every attribute a state sets, decoded and checked against ``n`` prompts, before any is
    set (a damaged state leaves the sampler as it was)."""
    arrays = state["arrays"]
    new = {f"_{name}": codec.decode(arrays[name]).astype(np.float64) for name in FLOATS}
    new["_pool"] = codec.decode(arrays["pool"]).astype(np.int8)
    new["_observed"] = codec.decode(arrays["observed"]).astype(np.int64)
    for name, value in new.items():
        if value.shape != (n,):
            raise ValueError(f"array {name[1:]!r} has shape {value.shape}, expected ({n},)")
    indices = [codec.decode(blob) for blob in state["sets"]]
    new["_sets"] = [IndexSet(n, members) for members in indices]
    queues = {}
    for code in (WARMUP, EASY):
        saved = state["queues"][str(code)]
        heap = [(float(w), int(i)) for w, i in codec.decode(saved["heap"]).reshape(-1, 2)]
        queues[code] = (heap, IndexSet(n, codec.decode(saved["due"])))
        indices += [np.asarray([i for _, i in heap], dtype=np.int64)]
    pending = {}
    for entry in state["pending"]:
        i, c, *d = entry  # states before the draw count: [index, clock]
        pending[int(i)] = (c, d[0] if d else int(state.get("draws", 0)))
    indices.append(np.asarray(list(pending), dtype=np.int64))
    if any(len(x) and (x.min() < 0 or x.max() >= n) for x in indices):
        raise ValueError(f"a prompt index outside 0..{n - 1}")
    new["_queue_contents"] = queues
    new.update(
        _clock=state["clock"],
        _n_hint=int(state["n_hint"]),
        _n_window=int(state.get("n_window", state["n_hint"])),
        _n_max=int(state.get("n_max", state["n_hint"])),
        _draws=int(state.get("draws", 0)),
        _n_seen=state["n_seen"],
        _group_size=int(state["group_size"]),
        _sizes={int(g): k for g, k in state.get("group_sizes", {}).items()},
        _pending=pending,
        _ema=dict(state["ema"]),
    )
    return new


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
