"""passband: verifiable rewards, a pass-rate curriculum and a lean GRPO trainer.

The floors, from the ground up: ``sandbox`` <- ``verifiers`` <- ``curriculum`` <- ``trainer``
<- ``passband`` (CLI, config files, demo). Nothing imports upward; importing ``passband`` is cheap
and pulls in neither torch nor transformers.
"""

import os as _os

__version__ = "0.1.0"
__all__ = ["__version__"]

# In a source checkout the subpackages are top-level folders beside this one (pyproject maps
# ``passband.verifiers`` to ``verifiers/`` ...). Installed, they sit inside this folder. Searching
# the checkout root as well lets an uninstalled checkout import them, in worker processes too
# (a GPU box that cannot pip install; ``python -c`` from the repository root).
_here = _os.path.dirname(_os.path.abspath(__file__))
_root = _os.path.dirname(_here)
if not _os.path.isdir(_os.path.join(_here, "verifiers")) and _os.path.isfile(
    _os.path.join(_root, "verifiers", "__init__.py")
):
    __path__.append(_root)  # noqa: F821 - a package's __path__
del _here, _root
