"""A training-batch simulator with known pass rates: no model, only coin flips.

Used by ``benchmarks/bench_curriculum.py`` and by the tests to compare three ways of filling a batch
of groups: uniform sampling, uniform sampling plus DAPO-style dynamic sampling (filter unanimous
groups, refill), and the curriculum (with the same filter and refill).

The policy drifts. Prompt ``i`` passes with ``sigmoid(z_i + a_i * t / steps + learned_i)``: a
global improvement whose size ``a_i`` differs per prompt (a fifth of the hopeless prompts are
learnable and cross into the band mid-run), plus ``learned_i`` that grows each time the prompt is
trained on, so prompts that are trained on leave the band upwards. With ``forgetting`` a prompt
also loses a share of ``learned_i`` in every step it is not trained on, as a real policy forgets
what it stops practising; ``final_pass_rate`` is the mean true pass rate at the end.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass, field

from passband.curriculum.sampler import Curriculum

STRATEGIES = ("uniform", "dynamic", "curriculum")


@dataclass(frozen=True)
class SimConfig:
    """A simulated training run: prompts whose true pass rates drift as the policy learns."""

    n_prompts: int = 2000
    """Prompts in the simulated dataset."""
    steps: int = 150
    """Simulated optimizer steps."""
    prompts_per_step: int = 64
    """Groups trained on per step."""
    group_size: int = 8
    """G: answers drawn per prompt."""
    mix: tuple[float, float, float] = (0.40, 0.30, 0.30)
    """Shares of (hopeless, easy, in-between) prompts at the start."""
    learnable_hard_share: float = 0.2
    """Share of hopeless prompts that become learnable during the run."""
    learn_step: float = 0.04
    """Logit gained by a prompt each time a group of it is trained on."""
    drift_speed: float = 1.0
    """Multiplier on the global improvement: 2 = learnable prompts cross the band twice as soon."""
    max_refill_rounds: int = 50
    """Extra draws to replace groups the zero-variance filter dropped."""
    band: tuple[float, float] = (0.2, 0.8)
    """The curriculum's target pass-rate band."""
    prior_noise: float = 0.0
    """> 0: the curriculum gets pre-scoring priors (k=8 at step 0) from a model whose logits differ
    by this much noise; 0: cold start, no priors."""
    forgetting: float = 0.0
    """Share of what a prompt has learned (``learn_step`` per trained group) that it loses in
    each step it is not trained on: a policy forgets what it stops practising. 0: nothing is
    forgotten."""
    jump: bool = False
    """True: the hopeless prompts that become learnable do so at once, each at a random step in
    the middle of the run (25% to 60% of it), to a pass rate between 0.25 and 0.6, with no success
    before to announce it; False: they drift up with the policy, as the others do."""
    seed: int = 0
    """Seeds the world and the curriculum."""
    curriculum_options: dict = field(default_factory=dict)
    """Extra ``CurriculumConfig`` fields, e.g. ``{"predict_fresh": False}``."""
    text_signal: float = 0.0
    """> 0: every prompt carries a text, given to the curriculum as ``texts=``, whose topic word
    names its starting kind (hopeless / easy / in-between) with this probability and a random
    kind's otherwise, among filler words that say nothing; 0: no texts (the curriculum sees ids
    only). Whether a hopeless prompt will become learnable is never in its text."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.text_signal <= 1.0:
            raise ValueError(
                f"SimConfig.text_signal={self.text_signal!r}: expected a number in [0, 1]"
            )
        for name in ("n_prompts", "steps", "prompts_per_step"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"SimConfig.{name}={getattr(self, name)!r}: expected an int >= 1")
        if not isinstance(self.group_size, int) or self.group_size < 2:
            raise ValueError(f"SimConfig.group_size={self.group_size!r}: expected an int >= 2")
        mix = tuple(self.mix)
        if len(mix) != 3 or any(not 0 <= x for x in mix) or not sum(mix) > 0:
            raise ValueError(
                f"SimConfig.mix={self.mix!r}: expected three shares >= 0 (hopeless, easy, "
                "in-between) with a positive sum"
            )
        clash = {"band", "group_size_hint", "group_size"} & set(self.curriculum_options)
        if clash:
            raise ValueError(
                f"SimConfig.curriculum_options sets {sorted(clash)}: set SimConfig.band and "
                "SimConfig.group_size instead (the simulated run uses them too)"
            )


class _World:
    """True pass rates of all prompts under the drifting policy."""

    def __init__(self, cfg: SimConfig) -> None:
        rng = random.Random(cfg.seed)
        self.cfg, self.rng = cfg, random.Random(cfg.seed + 1)
        self.z, self.a, self.learned = [], [], [0.0] * cfg.n_prompts
        self.jumps: dict[int, tuple[float, float]] = {}  # prompt -> (step, logit) (``jump``)
        kinds = []  # 0 hopeless, 1 easy, 2 in-between: what a text can tell
        hard, easy, _ = cfg.mix
        for _ in range(cfg.n_prompts):
            u = rng.random()
            kinds.append(0 if u < hard else 1 if u < hard + easy else 2)
            if u < hard:
                learnable = rng.random() < cfg.learnable_hard_share
                self.z.append(rng.gauss(-5.0, 0.7))
                self.a.append(rng.uniform(4.0, 6.5) if learnable else rng.uniform(0.0, 1.0))
                if learnable and cfg.jump:  # at once, mid-run, to a rate in [0.25, 0.6]
                    rate = rng.uniform(0.25, 0.6)
                    at = rng.uniform(0.25, 0.6) * cfg.steps
                    self.a[-1], self.jumps[len(self.z) - 1] = 0.0, (at, math.log(rate / (1 - rate)))
            elif u < hard + easy:
                self.z.append(rng.gauss(4.5, 1.0))
                self.a.append(rng.uniform(0.0, 1.5))
            else:
                self.z.append(rng.uniform(-2.5, 2.5))
                self.a.append(rng.uniform(0.5, 2.0))
        self.texts = _texts(kinds, cfg.text_signal, cfg.seed) if cfg.text_signal > 0 else None

    def pass_rate(self, i: int, step: int) -> float:
        x = self.z[i] + self.a[i] * self.cfg.drift_speed * step / self.cfg.steps + self.learned[i]
        jump = self.jumps.get(i)
        if jump is not None and step >= jump[0]:
            x = max(x, jump[1] + self.learned[i])
        return 1.0 / (1.0 + math.exp(-x))

    def forget(self, trained: set[int], share: float) -> None:
        """Every prompt not in ``trained`` loses ``share`` of what it has learned."""
        for i, learned in enumerate(self.learned):
            if learned and i not in trained:
                self.learned[i] = learned * (1.0 - share)

    def roll(self, i: int, step: int) -> int:
        p = self.pass_rate(i, step)
        return sum(self.rng.random() < p for _ in range(self.cfg.group_size))


_TOPICS = ("proof", "lookup", "word")  # by kind: hopeless, easy, in-between
_FILLER = tuple("the a of to find what is its value number total each how many then and".split())


def _texts(kinds: list[int], signal: float, seed: int) -> list[str]:
    """One text per prompt: a topic word that tells its kind with probability ``signal``."""
    rng = random.Random(seed + 4)  # its own stream: the world's draws do not change with texts
    out = []
    for i, kind in enumerate(kinds):
        topic = kind if rng.random() < signal else rng.randrange(len(_TOPICS))
        filler = " ".join(rng.choice(_FILLER) for _ in range(rng.randint(3, 8)))
        out.append(f"{_TOPICS[topic]} {filler} item {i}")
    return out


class _Uniform:
    def __init__(self, n: int, seed: int) -> None:
        self.n, self.rng = n, random.Random(seed)

    def sample(self, k: int, exclude=()) -> list[int]:
        skip = set(exclude)
        pool = [i for i in range(self.n) if i not in skip]
        return self.rng.sample(pool, min(k, len(pool)))

    def observe(self, *_args) -> None:
        pass


def _make_sampler(strategy: str, cfg: SimConfig, world: _World):
    if strategy != "curriculum":
        return _Uniform(cfg.n_prompts, cfg.seed + 2)
    priors = None
    if cfg.prior_noise > 0:
        noisy = random.Random(cfg.seed + 3)
        priors = {}
        for i in range(cfg.n_prompts):
            p = 1.0 / (1.0 + math.exp(-(world.z[i] + noisy.gauss(0.0, cfg.prior_noise))))
            priors[i] = (sum(noisy.random() < p for _ in range(8)), 8)
    # the run's length as GRPOTrainer gives it (its rollout budget at max_oversample = 1.25);
    # this simulator's refills are not capped like the trainer's, so its clock runs past it
    n_step = math.ceil(1.25 * cfg.prompts_per_step)
    return Curriculum(
        range(cfg.n_prompts),
        band=cfg.band,
        priors=priors,
        seed=cfg.seed,
        group_size_hint=cfg.group_size,
        texts=world.texts,
        **{"run_groups": cfg.steps * n_step, **cfg.curriculum_options},
    )


def run_simulation(strategy: str, cfg: SimConfig = SimConfig()) -> dict:
    """Run one strategy; return signal share, generation overhead, drift and recovery figures."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy {strategy!r} not in {STRATEGIES}")
    world = _World(cfg)
    sampler = _make_sampler(strategy, cfg, world)
    lo, g, n = cfg.band[0], cfg.group_size, cfg.prompts_per_step
    hopeless = {i for i in range(cfg.n_prompts) if world.pass_rate(i, 0) < lo}
    became: dict[int, int] = {}  # hopeless prompt -> first step its true rate reached the band
    recovered: dict[int, int] = {}  # -> first step after that it was trained on
    seen_before: set[int] = set()  # became learnable after the strategy had already rolled it
    rolled_ever: set[int] = set()
    drawn_after: set[int] = set()  # became learnable, then rolled at least once (mixed or not)
    per_step = []  # (rolled, with_signal)
    for step in range(cfg.steps):
        for i in hopeless - became.keys():
            if world.pass_rate(i, step) >= lo:
                became[i] = step
                if i in rolled_ever:
                    seen_before.add(i)
        used: list[int] = []
        trained: set[int] = set()  # prompts trained on this step (what forgetting spares)
        rolled = signal = kept = 0
        rounds = 0
        while kept < n and rounds <= (cfg.max_refill_rounds if strategy != "uniform" else 0):
            ids = sampler.sample(n - kept, exclude=used)
            rounds += 1
            for i in ids:
                s = world.roll(i, step)
                sampler.observe(i, s, g)
                rolled_ever.add(i)
                if i in became:
                    drawn_after.add(i)
                rolled += 1
                if 0 < s < g:
                    signal += 1
                    kept += 1
                    world.learned[i] += cfg.learn_step
                    trained.add(i)
                    if i in became and i not in recovered:
                        recovered[i] = step
            used += ids
            if strategy == "uniform":
                kept = n  # plain uniform trains on whatever came back
        per_step.append((rolled, signal))
        if cfg.forgetting:
            world.forget(trained, cfg.forgetting)
    out = _summarise(strategy, cfg, per_step, became, recovered, sampler)
    out["final_pass_rate"] = statistics.fmean(
        world.pass_rate(i, cfg.steps) for i in range(cfg.n_prompts)
    )
    out["recovered_share_seen"] = sum(1 for i in seen_before if i in recovered) / max(
        1, len(seen_before)
    )
    # drawn again after it became learnable, whatever the group said: "recovered" needs a mixed
    # group, so a prompt that crossed the whole band between two looks counts only here
    out["drawn_after_share"] = len(drawn_after) / max(1, len(became))
    return out


def _summarise(strategy, cfg, per_step, became, recovered, sampler) -> dict:
    rolled = sum(r for r, _ in per_step)
    signal = sum(s for _, s in per_step)
    third = max(1, len(per_step) // 3)
    phases = [per_step[:third], per_step[third : 2 * third], per_step[2 * third :]]
    delays = [recovered[i] - became[i] for i in recovered]
    out = {
        "strategy": strategy,
        "signal_share": signal / rolled,
        "generated_per_trained": rolled / max(1, signal),
        "signal_share_by_third": [
            sum(s for _, s in ph) / max(1, sum(r for r, _ in ph)) for ph in phases
        ],
        "became_learnable": len(became),
        "recovered_share": len(recovered) / max(1, len(became)),
        "recovery_delay_median": statistics.median(delays) if delays else None,
        "groups_rolled": rolled,
    }
    if isinstance(sampler, Curriculum):
        out["curriculum"] = sampler.metrics()
    return out


class CoinFlipGenerator:
    """A ``generate(prompts, n, seed=...)`` callable with a known pass rate per prompt.

    ``table`` maps a prompt to ``(pass_rate, answer)``; each sample is the right answer with that
    probability, else a wrong one, written as ``template % answer``. The stream for a prompt
    depends only on (seed, prompt), so results do not depend on batching. ``delay`` (seconds per
    call) lets tests kill a run in the middle. Picklable, no torch: the real interface of
    ``prescore``, with a model whose behaviour is known.
    """

    def __init__(self, table: dict, template: str = "%s", delay: float = 0.0) -> None:
        self.table, self.template, self.delay = dict(table), template, delay
        self.calls = 0
        self.samples = 0

    def __call__(self, prompts: list, n: int, seed: int = 0) -> list[list[str]]:
        import time

        if self.delay:
            time.sleep(self.delay)
        self.calls += 1
        self.samples += n * len(prompts)
        out = []
        for prompt in prompts:
            p, answer = self.table[prompt]
            rng = random.Random(f"{seed}|{prompt}")
            out.append(
                [self.template % (answer if rng.random() < p else f"{answer}9") for _ in range(n)]
            )
        return out
