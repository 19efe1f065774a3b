"""Compile a program once, then run it on many inputs: the compiler under limits of its own.

A language with an ``artifact`` (C and C++: ``prog``) can be built once and run many times.
``compile_once(code, language)`` runs the compile in a sandbox of its own, under
``COMPILE_LIMITS``, and returns a ``Build``: the artifact's bytes, or the failed compile run (the
compiler's messages on its stderr). ``Build.run(stdin=..., limits=...)`` then runs the artifact in
a fresh sandbox each time, under the program's limits only.

Why not compile inside each run: the compiler's needs do not depend on the program's limits
(``#include <bits/stdc++.h>`` alone takes g++ about 200 MB, so a correct program failed every test
at ``memory_mb = 128``), a compile of a second or more counted against each test's deadline, and a
problem with ten tests compiled the same program ten times. The compile is still untrusted work
(the compiler is the source's first victim): it runs in the sandbox, bounded by
``COMPILE_LIMITS``; the artifact only ever runs in the sandbox too.

    build = compile_once(source, "cpp")
    if build.ok:
        result = build.run(stdin="2 3\\n", limits=Limits(timeout_s=2, memory_mb=64))
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from passband.sandbox.languages import Language, get_language
from passband.sandbox.limits import ExecResult, Limits
from passband.sandbox.pool import Pool, default_pool

__all__ = ["COMPILE_LIMITS", "Build", "compile_once"]

COMPILE_LIMITS = Limits(timeout_s=20.0, memory_mb=1024, max_output_bytes=64 << 20)
"""What a compile may use: its deadline, memory (all of the compiler's processes) and artifact size
(base64 on stdout)."""

_DRIVER = """import base64, subprocess, sys
done = subprocess.run({command!r}, stdin=subprocess.DEVNULL, stdout=2, stderr=2)
if done.returncode:
    sys.exit(done.returncode if done.returncode > 0 else 1)
with open({artifact!r}, "rb") as f:
    sys.stdout.write(base64.b64encode(f.read()).decode())
"""
_DRIVER_FILE = "solution.py"  # the Python language's source file: the driver runs as the program


@dataclass(frozen=True)
class Build:
    """A compiled program: ``binary`` (the artifact's bytes), or None when the compile failed;
    ``result`` is the compile's run (its exit code, stderr, whether it timed out)."""

    language: Language
    binary: bytes | None
    result: ExecResult

    @property
    def ok(self) -> bool:
        return self.binary is not None

    def run(self, *, stdin: str = "", limits: Limits = Limits(), pool: Pool | None = None):
        """Run the artifact once in a fresh sandbox, under ``limits``: an ``ExecResult``."""
        if self.binary is None:
            raise ValueError("the compile failed: there is nothing to run (see Build.result)")
        lang = self.language
        runs = Language(f"{lang.name} (built)", lang.source_file, None, lang.run)
        files = {lang.artifact: self.binary}
        return (pool or default_pool()).run(
            "", stdin=stdin, limits=limits, language=runs, files=files
        )


def compile_once(
    code: str,
    language: str | Language,
    *,
    pool: Pool | None = None,
    limits: Limits = COMPILE_LIMITS,
) -> Build:
    """Compile ``code`` in the sandbox under ``limits``; see the module's docstring."""
    lang = get_language(language)
    if not lang.artifact or not lang.run:
        raise ValueError(f"language {lang.name!r} names no artifact to build once and run")
    if _DRIVER_FILE in (lang.source_file, lang.artifact):
        raise ValueError(f"language {lang.name!r}: {_DRIVER_FILE!r} is the build driver's file")
    driver = _DRIVER.format(command=list(lang.compile), artifact=lang.artifact)
    result = (pool or default_pool()).run(driver, limits=limits, files={lang.source_file: code})
    if not result.ok:
        return Build(lang, None, result)
    return Build(lang, base64.b64decode(result.stdout), result)
