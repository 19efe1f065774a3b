"""The charts of ``passband report``, one PNG per question a practitioner asks about a GRPO run,
in the order they ask them: is it learning, how many groups carry signal, which prompts dominate
the gradient and what their rewards look like, how the reward is scaled, and only then the
optimizer and the clock.

Each chart function takes a ``RunView`` (the run plus what is derived from it once) and a target
path, writes the PNG and returns None, or returns a one-line reason why it could not (the metric
was never logged, the curriculum was off); the report shows that reason in place of the picture.
Inside a chart, a panel that is inactive by configuration says so in one line (``no KL: beta =
0``) instead of drawing a flat line. All drawing goes through ``passband.curriculum.plot``, the one
module that imports matplotlib; the demo's headline picture is ``passband.plots.demo``.
"""

from passband.plots.prompts import (
    chart_concentration,
    chart_curriculum,
    chart_outliers,
    chart_pass_rate_histogram,
    chart_pass_rate_moves,
    chart_reward_distributions,
)
from passband.plots.steps import (
    chart_accuracy_length,
    chart_groups,
    chart_optimization,
    chart_reward,
    chart_time,
    inflation_steps,
)

__all__ = [
    "CHARTS",
    "inflation_steps",
    "chart_accuracy_length",
    "chart_groups",
    "chart_concentration",
    "chart_outliers",
    "chart_reward_distributions",
    "chart_reward",
    "chart_pass_rate_moves",
    "chart_curriculum",
    "chart_pass_rate_histogram",
    "chart_optimization",
    "chart_time",
]

# (file stem, title, what to look for, function) in page order.
CHARTS = (
    (
        "accuracy_length",
        "Accuracy and length",
        "Length climbing while pass rate is flat (red "
        "markers) means the policy is paid for length, not correctness.",
        chart_accuracy_length,
    ),
    (
        "groups",
        "Signal per step",
        "Zero-variance groups carry no gradient; refills replace them at extra rollout cost.",
        chart_groups,
    ),
    (
        "concentration",
        "Concentration of the gradient",
        "Share of Σ|advantage|·tokens carried by the "
        "heaviest 1% and 10% of effective groups, against equal shares (dashed); a healthy run hugs "
        "the dashed lines. Red dots: steps with a flagged outlier.",
        chart_concentration,
    ),
    (
        "outliers",
        "Outlier prompts",
        "Prompts flagged by the robust rules (see the table above), "
        "how close ordinary groups came to each threshold, and flagged prompts' rewards against "
        "everyone's.",
        chart_outliers,
    ),
    (
        "reward_distributions",
        "Reward distributions",
        "Within-group mean and spread per window of "
        "steps: mass at std 0 is wasted rollouts; a far-off bar is a prompt on another scale.",
        chart_reward_distributions,
    ),
    (
        "reward",
        "Reward and its scale",
        "Mean reward with a ±1 std band, every component by name, and each component's scale.",
        chart_reward,
    ),
    (
        "pass_rate_moves",
        "Pass-rate movement",
        "Prompts seen more than once: pass rate at the first "
        "visit against the last; above the diagonal is learning.",
        chart_pass_rate_moves,
    ),
    (
        "curriculum",
        "Curriculum",
        "Pool sizes over time and the share of sampled prompts in the band.",
        chart_curriculum,
    ),
    (
        "pass_rate_histogram",
        "Pass-rate histogram",
        "Latest per-prompt pass-rate estimates; the "
        "shaded band is where groups disagree and learning happens.",
        chart_pass_rate_histogram,
    ),
    (
        "optimization",
        "Optimization",
        "KL to the reference, clip fraction, entropy, gradient norm, "
        "learning rate and loss; a gauge inactive by configuration says so.",
        chart_optimization,
    ),
    (
        "time",
        "Where the time goes",
        "Seconds per step by phase: sample, generate, score, update, sync.",
        chart_time,
    ),
)
