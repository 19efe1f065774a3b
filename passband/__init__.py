"""passband: verifiable rewards, a pass-rate curriculum and a lean GRPO trainer.

The floors, from the ground up: ``sandbox`` <- ``verifiers`` <- ``curriculum`` <- ``trainer``
<- ``passband`` (CLI, config files, demo). Nothing imports upward; importing ``passband`` is cheap
and pulls in neither torch nor transformers.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
