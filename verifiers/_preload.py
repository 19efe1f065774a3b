"""What the worker forkserver loads before it forks any worker: the verifiers, warmed up.

sympy and math-verify initialise much of themselves lazily: the first ``simplify`` or LaTeX parse
in a process costs 0.5-1.5 s, the next ones milliseconds. Paid in every fresh worker, that start-up
lands inside the first call's deadline, so sixteen threads calling ``math`` at once on two cores
all timed out. Paid once here, every forked worker inherits the warm state (copy-on-write).
Never imported by anything but the forkserver (``_spawning.context``).
"""

from __future__ import annotations

import passband.verifiers  # noqa: F401  (registers the built-ins)
from passband.verifiers._math_equiv import slow_compare

_WARM_PAIRS = (
    (r"\frac{1}{\sqrt{2}}", r"\frac{\sqrt{2}}{2}"),
    (r"(x+1)^2", r"x^2 + 2x + 1"),
    (r"2x - y + 3 = 0", r"y = 2x + 3"),
    (r"[\sqrt{3}, \infty)", r"(-\infty, 2) \cup (2, \infty)"),
    (r"\{1, 2\}", r"(1, 2)"),
    (r"\frac{\pi}{2} - 1", r"2 - e^{-1}"),
    (r"i", r"e^{i\pi/2}"),
    (r"0.5", r"\frac{1}{2}"),
    (r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}"),
)


def _warm() -> None:
    for gold, pred in _WARM_PAIRS:
        try:
            slow_compare(gold, pred)
        except Exception:  # noqa: BLE001 - warming is best effort; a real call reports errors
            pass


_warm()
