"""Languages the sandbox can run. Python runs inside the warm forked interpreter; the others are
compiled and executed inside the same sandbox (the compiler is untrusted input's first victim too).

Add a language with ``register_language(Language(...))``: a source file name, an optional compile
command and a run command, all relative to the run's working directory. ``artifact`` names the file
the compile makes and the run needs (C and C++: ``prog``): a caller that runs one program on many
inputs then compiles it once, under the compiler's own limits (``build.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LANGUAGES", "Language", "get_language", "register_language"]


@dataclass(frozen=True)
class Language:
    name: str
    source_file: str  # the program is written here, inside the working directory
    compile: tuple[str, ...] | None = (
        None  # run first; a non-zero exit ends the run with its output
    )
    run: tuple[str, ...] | None = None  # None: execute in the warm Python interpreter itself
    artifact: str | None = None  # the file ``compile`` makes and ``run`` needs (``build.py``)

    def __post_init__(self) -> None:
        if not self.name or "/" in self.source_file or not self.source_file:
            raise ValueError(f"Language needs a name and a plain source file name, got {self!r}")
        if self.artifact is not None and (
            not self.compile or not self.artifact or "/" in self.artifact
        ):
            raise ValueError(
                f"a Language's artifact is a plain file its compile makes, got {self!r}"
            )

    def to_wire(self) -> dict:
        return {
            "name": self.name,
            "source_file": self.source_file,
            "compile": list(self.compile) if self.compile else None,
            "run": list(self.run) if self.run else None,
        }


LANGUAGES: dict[str, Language] = {}


def register_language(language: Language) -> Language:
    LANGUAGES[language.name] = language
    return language


def get_language(name: str | Language) -> Language:
    if isinstance(name, Language):
        return name
    try:
        return LANGUAGES[name]
    except KeyError:
        raise ValueError(
            f"unknown language {name!r}; known: {', '.join(sorted(LANGUAGES))}"
        ) from None


register_language(Language("python", "solution.py"))
register_language(
    Language(
        "c",
        "main.c",
        ("gcc", "-O2", "-std=gnu17", "-o", "prog", "main.c", "-lm"),
        ("./prog",),
        artifact="prog",
    )
)
register_language(
    Language(
        "cpp",
        "main.cpp",
        ("g++", "-O2", "-std=gnu++17", "-o", "prog", "main.cpp"),
        ("./prog",),
        artifact="prog",
    )
)
