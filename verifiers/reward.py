"""``Reward``: weighted verifier terms, gates and penalties composed into one scored ``Verdict``.

    reward = Reward(
        terms={"correct": "math", "format": (tag_format("think", "answer"), 0.1)},
        gates=["format"],                      # a term that must pass, else total = gate_value
        penalties=[overlong(1024, 256)],
        fields={"answer": "gold"},             # verifier field <- dataset column
    )
    verdict = reward(completion, **row)        # verdict.components: every term/penalty by name

Rules, in order: a gate that does not pass decides the verdict (total ``gate_value`` plus the
penalties, status ``wrong``; or the gate's own ``error``/``timeout``), and the other terms are not
run: failing the gate never escapes a penalty. A term that cannot judge (it raises, times out,
returns NaN or None) leaves no total: the verdict is that ``error``/``timeout``, which training
masks, so a completion cannot escape a negative term by breaking its check. Otherwise the
total is the sum of ``weight * score`` over terms plus every penalty value; a hard cap that fires
takes the reward away (the total becomes at most 0: a cap never raises a negative total).
``status`` is the primary term's (the first, unless ``primary=`` names another), so
``verdict.passed`` means "the answer is right" for the curriculum, not "the shaped score is high".
The reserved reference key ``num_tokens`` goes to the penalties, never to the verifiers.
"""

from __future__ import annotations

import copy
import inspect
import math
from collections.abc import Callable, Mapping, Sequence

from passband.verifiers._coerce import call_safely, clip, describe
from passband.verifiers._from_trl import adapted
from passband.verifiers.registry import get
from passband.verifiers.verdict import Verdict

__all__ = ["Reward"]

VerifierLike = str | Callable[..., object]
NUM_TOKENS = "num_tokens"


class Reward:
    """A picklable composed reward; call it like a verifier: ``reward(completion, **reference)``."""

    def __init__(
        self,
        terms: Mapping[str, VerifierLike | tuple],
        *,
        gates: Sequence[str] = (),
        penalties: Sequence | Mapping[str, object] = (),
        fields: Mapping[str, str] | None = None,
        primary: str | None = None,
        gate_value: float = 0.0,
    ) -> None:
        if not terms:
            raise ValueError("Reward needs at least one term, e.g. terms={'correct': 'math'}")
        self._terms = {name: _term(name, spec) for name, spec in dict(terms).items()}
        self.gates = tuple(gates)
        for gate in self.gates:
            if gate not in self._terms:
                raise ValueError(f"gate {gate!r} is not a term; terms are {sorted(self._terms)}")
        self.primary = primary or next(
            (name for name in self._terms if name not in self.gates or len(self._terms) == 1),
            None,
        )
        if self.primary is None:
            raise ValueError("every term is a gate: name the primary term (primary=...)")
        if self.primary not in self._terms:
            raise ValueError(
                f"primary {self.primary!r} is not a term; terms are {sorted(self._terms)}"
            )
        self._penalties = _penalties(penalties)
        primary_term = self._terms[self.primary]
        _check_length_weight(
            self._penalties, self.primary, primary_term.weight, primary_term.verifier
        )
        clash = set(self._penalties) & set(self._terms)
        if clash:
            raise ValueError(f"names used both as term and penalty: {sorted(clash)}")
        self.fields = dict(fields or {})
        self.gate_value = float(gate_value)
        if not math.isfinite(self.gate_value):
            raise ValueError(f"gate_value must be a finite number, got {gate_value!r}")

    @classmethod
    def from_verifier(
        cls, verifier: VerifierLike, fields: Mapping[str, str] | None = None, **options
    ) -> Reward:
        """One term named ``correct``: ``Reward.from_verifier("math", {"answer": "gold"})``."""
        return cls({"correct": verifier}, fields=fields, **options)

    def with_verifiers(
        self, wrap: Callable[[Callable[..., object]], Callable[..., object]]
    ) -> Reward:
        """A copy whose every term runs ``wrap(verifier)`` instead of its verifier (the same
        weights, gates, penalties and accepted fields). The curriculum's success rule uses it to
        make plain numbers pass at ``score >= success_threshold`` inside each term."""
        out = copy.copy(self)
        out._terms = {name: term.wrapped(wrap) for name, term in self._terms.items()}
        return out

    @property
    def primary_verifier(self) -> Callable[..., object]:
        """The primary term's verifier: its verdict's status is the Reward's (``passed``)."""
        return self._terms[self.primary].verifier

    @property
    def component_names(self) -> list[str]:
        """Every name that appears in ``verdict.components``, terms first."""
        return list(self._terms) + list(self._penalties)

    def time_limit(self, reference: Mapping) -> float:
        """The longest its terms may take on ``reference`` (see ``verify_batch``), run in turn."""
        limits = [getattr(t.verifier, "time_limit", None) for t in self._terms.values()]
        return sum(limit(reference) for limit in limits if callable(limit))

    def __call__(self, completion: str, **reference: object) -> Verdict:
        num_tokens = reference.pop(NUM_TOKENS, None)
        for field, column in self.fields.items():
            if column in reference:
                reference[field] = reference[column]
        components = {name: 0.0 for name in self.component_names}
        for gate in self.gates:
            verdict = self._run(gate, completion, reference, num_tokens)
            components[gate] = self._terms[gate].weight * verdict.score
            if not verdict.passed:
                note = clip(f"gate {gate!r} failed: {verdict.detail}")
                if not verdict.checkable:  # the gate's checker failed: nothing to score
                    return Verdict(self.gate_value, verdict.status, note, components)
                # penalties still apply: skipping the gate must not be a way to skip them (an
                # unformatted overlong answer would outscore a formatted right one)
                failed = Verdict(self.gate_value, "wrong", note)
                return self._apply_penalties(
                    completion, failed, num_tokens, components, self.gate_value, note
                )
        verdicts = {g: None for g in self.gates}
        for name, term in self._terms.items():
            if name not in verdicts:
                verdicts[name] = self._run(name, completion, reference, num_tokens)
                components[name] = term.weight * verdicts[name].score
        for name, verdict in verdicts.items():
            if verdict is not None and not verdict.checkable:
                # any term that could not judge (it raised, timed out, returned NaN or None):
                # no total to train on. Counting it as 0 let a completion escape a negative
                # term by making its check time out.
                note = clip(f"term {name!r}: {verdict.status} ({verdict.detail})")
                return Verdict(0.0, verdict.status, note, components)
        primary = verdicts[self.primary]
        note = f"{self.primary}: {primary.status} ({primary.detail})"
        total = sum(components.values())
        return self._apply_penalties(completion, primary, num_tokens, components, total, note)

    def _run(self, name: str, completion: str, reference: dict, num_tokens=None) -> Verdict:
        term = self._terms[name]
        accepted = (
            reference
            if term.fields is None
            else {k: v for k, v in reference.items() if k in term.fields}
        )
        if num_tokens is not None and isinstance(term.verifier, Reward):  # its penalties count
            accepted = {**accepted, NUM_TOKENS: num_tokens}  # tokens, as this one's do
        return call_safely(term.verifier, completion, accepted, name)

    def _apply_penalties(
        self, completion, primary: Verdict, num_tokens, components: dict, total: float, note: str
    ) -> Verdict:
        """``total`` plus every penalty (a hard cap that fires takes away any reward: the total
        becomes at most 0); status ``primary``'s, ``note`` first in the detail."""
        notes = [note]
        capped = False
        for name, penalty in self._penalties.items():
            try:
                outcome = penalty(completion, primary, num_tokens=num_tokens)
                value, zero_total = float(outcome.value), bool(outcome.zero_total)
            except Exception as exc:  # noqa: BLE001 - a broken penalty must not sink the batch
                return Verdict(
                    0.0, "error", f"penalty {name!r} raised {type(exc).__name__}: {exc}", components
                )
            components[name] = value + 0.0  # a penalty of -0.0 reads as 0.0
            total += value
            capped = capped or zero_total
            if outcome.value or outcome.zero_total:
                notes.append(f"{name} {outcome.value:+.3g}: {outcome.detail}")
        if capped:  # no reward: a total already below 0 stays there, so a cap is never a gain
            total = min(total, 0.0)
        if not math.isfinite(total):  # a term or penalty out of range: no reward to train on
            return Verdict(0.0, "error", clip(f"the total is {total}: {'; '.join(notes)}", 400))
        return Verdict(total, primary.status, clip("; ".join(notes), 400), components)

    def __repr__(self) -> str:
        terms = ", ".join(f"{n!r}: ({t.label}, {t.weight:g})" for n, t in self._terms.items())
        parts = [f"terms={{{terms}}}"]
        if self.gates:
            parts.append(f"gates={list(self.gates)!r}")
        if self._penalties:
            parts.append(f"penalties=[{', '.join(map(repr, self._penalties.values()))}]")
        if self.fields:
            parts.append(f"fields={self.fields!r}")
        return f"Reward({', '.join(parts)})"


class _Term:
    """A resolved verifier with its weight and the reference fields it accepts (None = all)."""

    def __init__(self, verifier, weight: float, label: str):
        self.verifier, self.weight, self.label = verifier, weight, label
        self.fields = _accepted_fields(verifier)

    def wrapped(self, wrap) -> _Term:
        term = copy.copy(self)  # the fields stay the verifier's own, whatever ``wrap`` accepts
        term.verifier = wrap(self.verifier)
        return term


def _term(name: str, spec) -> _Term:
    verifier, weight = spec if isinstance(spec, tuple) else (spec, 1.0)
    if (
        not isinstance(weight, (int, float))
        or isinstance(weight, bool)
        or not math.isfinite(weight)
    ):
        raise ValueError(f"term {name!r}: weight must be a finite number, got {weight!r}")
    label = repr(verifier) if isinstance(verifier, str) else describe(verifier)
    if isinstance(verifier, str):
        verifier = get(verifier)  # unknown names raise here, listing the known ones
    if not callable(verifier):
        raise TypeError(
            f"term {name!r}: expected a verifier name or callable, got {type(verifier).__name__}"
        )
    return _Term(adapted(verifier), float(weight), label)  # a TRL function: per completion


def _check_length_weight(penalties: Mapping, primary: str, weight: float, verifier=None) -> None:
    """``length_normalized`` takes up to its weight from a right answer: more than the primary
    term gives it would score a long right answer below a wrong one, and so would any of it
    where the primary gives wrong answers partial credit (``code_verifier(partial_credit=True)``)."""
    lengths = {
        n: p for n, p in penalties.items() if getattr(p, "name", None) == "length_normalized"
    }
    total = sum(p.weight for p in lengths.values())
    if lengths and getattr(verifier, "partial_credit", False) is True:
        raise ValueError(
            f"length_normalized penalties {sorted(lengths)} take length off right answers only, "
            f"but the primary term {primary!r} gives partial credit to wrong ones: a long right "
            "answer would score below a short, partly right one; use overlong / length_cap "
            "(which act on every answer), or a primary without partial credit"
        )
    if total > weight:
        raise ValueError(
            f"length_normalized penalties {sorted(lengths)} weigh {total!r} together, more than "
            f"the primary term {primary!r} gives a right answer ({weight!r}): a long right answer "
            f"would score below a wrong one; give them a weight of at most {weight!r} in all"
        )


def _penalties(penalties) -> dict:
    items = (
        penalties.items()
        if isinstance(penalties, Mapping)
        else [(getattr(p, "name", None), p) for p in penalties]
    )
    out: dict = {}
    for name, penalty in items:
        if not callable(penalty) or not name:
            raise TypeError(
                f"penalties must be callables with a name, e.g. overlong(1024, 256); got {penalty!r}"
            )
        if name in out:
            raise ValueError(f"two penalties named {name!r}; pass a dict to name them apart")
        out[name] = penalty
    return out


def _accepted_fields(fn) -> frozenset | None:
    """Keyword names ``fn`` takes, or None when it takes ``**kwargs`` (or cannot be inspected)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return frozenset(p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
