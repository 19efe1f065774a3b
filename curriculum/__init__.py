"""Pass-rate curriculum: estimates, the band, warm-up pool, and dataset pre-scoring.

No torch here (not even lazily): pre-scoring takes a plain ``generate(prompts, n)`` callable, and
matplotlib / pyarrow / datasets are imported only inside the functions that need them. The sampler
keeps its state in numpy arrays; ``Curriculum`` is imported on first use, so ``import
passband.curriculum`` (configs, pre-scoring) stays free of numpy.
"""

from passband.curriculum.config import CurriculumConfig
from passband.curriculum.plot import plot_pass_rate_histogram
from passband.curriculum.posterior import band_class
from passband.curriculum.prescore import PrescoreResult, prescore, priors_from_rows
from passband.curriculum.prescore_config import PrescoreConfig, PrescoreError
from passband.curriculum.tables import read_rows, write_rows

__all__ = [
    "Curriculum",
    "CurriculumConfig",
    "PrescoreConfig",
    "PrescoreError",
    "PrescoreResult",
    "band_class",
    "plot_pass_rate_histogram",
    "prescore",
    "priors_from_rows",
    "read_rows",
    "write_rows",
]


def __getattr__(name: str):
    if name == "Curriculum":  # numpy-backed: loaded when first asked for
        from passband.curriculum.sampler import Curriculum

        return Curriculum
    raise AttributeError(f"module 'passband.curriculum' has no attribute {name!r}")
