"""Packed micro-batches in which a group's prompt is computed once for all its completions.

The G completions of a group share one prompt. ``batch.pack`` lays every (prompt, completion)
sequence out on its own, so the update's forward and backward run the prompt G times; on short
answers most of a micro-batch is prompt (the demo: 8 prompt tokens to 4 completion tokens).
``pack_shared`` lays a group out as one unit, ``[prompt | completion 1 | ... | completion k]``,
with a 4D attention mask in which each completion sees the prompt and its own earlier tokens
only, and position ids that start every completion where the prompt ends. Each completion's
tokens then get the very log-probs they get alone (causal attention: a prompt's hidden states
never depend on what follows it), and the gradient is the same sum: the prompt's activations
receive the gradient of all k completions at once instead of k copies of it.

A unit is at most ``max(longest sequence, MIN_WIDTH)`` wide, so a group whose answers are long is
split into several units, each with its own copy of the prompt. A group whose prompt is shorter
than its mean completion is not shared (few tokens saved, and attention over a wide masked unit
cost more: the long task's update went from 0.28-0.33 to 0.39-0.45 s per step when it was);
when nothing is shared, the layout is ``pack``'s. Units are packed into rows first-fit, kept apart by the mask.
``layouts_that_work`` checks a model once at start-up against the padded layout; a model on
another attention implementation than ``sdpa`` or ``eager`` (which take a 4D mask as given) is
not shared, nor is one that fails the check.
"""

from __future__ import annotations

import torch

from passband.trainer._batch import collate, first_fit, pack, packed_batch
from passband.trainer._logprobs import completion_logprobs

__all__ = ["pack_shared", "layouts_that_work", "attention_kind", "MIN_WIDTH"]

MIN_WIDTH = 256  # tokens a unit may span when every sequence is shorter


def pack_shared(seqs: list, adv: torch.Tensor, device, *, additive: bool = False, dtype=None):
    """``batch.pack``'s dict (``rows``/``cols``/``seq``/``tok`` index the completion tokens'
    logits) plus ``attention_mask`` [R, 1, W, W]: bool (True attends), or ``additive`` 0 / min of
    ``dtype`` for ``eager`` attention. ``seqs``: (prompt_ids, completion_ids, use) in group order;
    consecutive sequences with equal prompts share one."""
    units = _units(seqs)
    if all(len(u) == 1 for u in units):  # nothing shared: the plain packed layout, no mask
        return pack(seqs, adv, device)
    length = [len(seqs[idx[0]][0]) + sum(len(seqs[i][1]) for i in idx) for idx in units]
    width = max(length)
    rows = first_fit(length, width)  # unit indices per row
    n = len(rows) * width
    ids, pos, unit, comp = [0] * n, [0] * n, [-1 - k for k in range(n)], [-2] * n
    where: list[tuple[int, int, int, int]] = []  # (row, col of the logit, seq, token)
    targets: list[int] = []
    for r, members in enumerate(rows):
        at = r * width
        for u in members:
            prompt = seqs[units[u][0]][0]
            P = len(prompt)
            ids[at : at + P], pos[at : at + P] = prompt, range(P)
            unit[at : at + P], comp[at : at + P] = [u] * P, [-1] * P
            last = at + P - 1  # the prompt's last token: every completion's first logit
            at += P
            for i in units[u]:
                c = seqs[i][1]
                ids[at : at + len(c)], pos[at : at + len(c)] = c, range(P, P + len(c))
                unit[at : at + len(c)], comp[at : at + len(c)] = [u] * len(c), [i] * len(c)
                cols = [last, *range(at, at + len(c) - 1)][: len(c)]  # none for an empty one
                where += [(r, col - r * width, i, k) for k, col in enumerate(cols)]
                targets += c
                at += len(c)
    shape = (len(rows), width)
    u, cq = torch.tensor(unit).view(shape), torch.tensor(comp).view(shape)  # [R, W]
    causal = torch.ones(width, width, dtype=torch.bool).tril()  # [W, W]: key column <= query
    allowed = (u.unsqueeze(2) == u.unsqueeze(1)) & causal  # [R, W(q), W(k)]: same unit
    allowed &= (cq.unsqueeze(1) == -1) | (cq.unsqueeze(1) == cq.unsqueeze(2))  # prompt or own
    mask = allowed.unsqueeze(1)  # [R, 1, W, W]
    if additive:
        dtype = dtype or torch.float32
        mask = torch.zeros(mask.shape, dtype=dtype).masked_fill(~mask, torch.finfo(dtype).min)
    index = torch.tensor(where, dtype=torch.long).reshape(-1, 4)  # [K, 4]
    ids_t = torch.tensor(ids, dtype=torch.long).view(shape)
    pos_t = torch.tensor(pos, dtype=torch.long).view(shape)
    targets_t = torch.tensor(targets, dtype=torch.long)
    return packed_batch(ids_t, pos_t, index, targets_t, seqs, adv, device, attention_mask=mask)


def _units(seqs: list) -> list[list[int]]:
    """Runs of consecutive sequences with one prompt, split where a unit would pass the cap. A
    run whose prompt is shorter than its mean completion stays one sequence per unit: the
    tokens saved are few, and attention over a wide masked unit costs more than they do."""
    cap = max(max(len(p) + len(c) for p, c, _ in seqs), MIN_WIDTH)
    runs: list[list[int]] = []
    for i, (prompt, _, _) in enumerate(seqs):
        if runs and list(seqs[runs[-1][0]][0]) == list(prompt):
            runs[-1].append(i)
        else:
            runs.append([i])
    units: list[list[int]] = []
    for run in runs:
        P = len(seqs[run[0]][0])
        if P * len(run) < sum(len(seqs[i][1]) for i in run):
            units += [[i] for i in run]
            continue
        size = cap + 1  # start a new unit at the run's first sequence
        for i in run:
            c = len(seqs[i][1])
            if size + c <= cap:
                units[-1].append(i)
                size += c
            else:
                units.append([i])
                size = P + c
    return units


def attention_kind(model) -> str | None:
    """ "bool" (sdpa), "additive" (eager), or None: an implementation that may not take a 4D mask."""
    config = getattr(getattr(model, "module", model), "config", None)
    return {"sdpa": "bool", "eager": "additive"}.get(getattr(config, "_attn_implementation", None))


@torch.no_grad()
def layouts_that_work(model, device) -> tuple[bool, bool]:
    """``(packed, shared)``: whether ``model`` gives the padded layout's log-probs
    (``batch.collate``) from ``batch.pack``'s layout (position ids restart, no attention mask: an
    attention that ignores them leaks across sequences) and from ``pack_shared``'s (a 4D mask;
    ``sdpa`` and ``eager`` only, and only when packing works). Checked once at start-up on two
    groups that share a prompt and two short sequences that pack into one row; one padded
    forward is the reference for both. A model that cannot take these inputs gets the padded
    layout."""
    seqs = [([3, 4, 5], [7, 8, 6], True), ([3, 4, 5], [9], True), ([6, 2], [5, 6, 7], True)]
    seqs += [([6, 2], [8, 9], True), ([6, 2], [4], True), ([8], [9, 6], True)]  # last two: a row
    adv = torch.zeros(len(seqs))
    was_training = model.training
    model.eval()
    try:
        padded = collate(seqs, adv, 0, device)
        mask = padded["mask"].bool()
        ref = completion_logprobs(model, padded, 1.0)[0][mask].float()

        def same(layout) -> bool:
            try:
                ours = completion_logprobs(model, layout(), 1.0)[0][mask].float()
            except Exception:  # this layout cannot be built or run here: not served
                return False
            return bool(torch.allclose(ours, ref, atol=1e-3, rtol=1e-3))

        packed = same(lambda: pack(seqs, adv, device))
        kind = attention_kind(model)
        if not packed or kind is None:
            return packed, False
        dtype = next(model.parameters()).dtype
        additive = kind == "additive"
        return True, same(lambda: pack_shared(seqs, adv, device, additive=additive, dtype=dtype))
    except Exception:  # not even the padded layout runs here; the first update will say why
        return False, False
    finally:
        model.train(was_training)
