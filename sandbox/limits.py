"""``Limits`` (what a run may use) and ``ExecResult`` (what a run did)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass


def _check_range(name: str, value: float, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ValueError(f"Limits.{name} must be a number in [{low}, {high}], got {value!r}")


def _check_int(name: str, value: int, low: int, high: int) -> None:
    # a float here reached the kernel as "4.0" (refused, so an older limit stayed) or crashed
    # the worker's arithmetic (a review)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"Limits.{name} must be an integer in [{low}, {high}], got {value!r}")


@dataclass(frozen=True)
class Limits:
    """Resource limits for one run. Every field is checked at construction."""

    timeout_s: float = 10.0
    """Wall-clock limit for the whole run; the process tree is killed after it."""
    cpu_s: float | None = None
    """RLIMIT_CPU per process; None -> ceil(timeout_s) + 1."""
    memory_mb: int = 512
    """Address space per process on top of the warm interpreter, and the run's memory cgroup (all
    processes together) where cgroup v1 memory is usable."""
    max_processes: int = 64
    """Processes/threads alive at once in the run (pids cgroup or RLIMIT_NPROC)."""
    max_output_bytes: int = 1 << 20
    """Per stream (stdout, stderr); past it the run is killed."""
    max_file_mb: int = 64
    """RLIMIT_FSIZE: the largest file the program may write."""
    disk_mb: int = 256
    """All files of the run together (private tmpfs, where a mount namespace is usable). The files
    are memory: under a memory cgroup they get at most half of ``memory_mb``."""
    max_open_files: int = 64
    """RLIMIT_NOFILE."""

    def __post_init__(self) -> None:
        _check_range("timeout_s", self.timeout_s, 0.01, 3600)
        if self.cpu_s is not None:
            _check_range("cpu_s", self.cpu_s, 0.01, 3600)
        _check_int("memory_mb", self.memory_mb, 16, 1 << 20)
        _check_int("max_processes", self.max_processes, 1, 4096)
        _check_int("max_output_bytes", self.max_output_bytes, 1, 1 << 30)
        _check_int("max_file_mb", self.max_file_mb, 0, 1 << 20)
        _check_int("disk_mb", self.disk_mb, 1, 1 << 20)
        _check_int("max_open_files", self.max_open_files, 8, 1 << 16)

    @property
    def cpu_seconds(self) -> int:
        return int(math.ceil(self.cpu_s if self.cpu_s is not None else self.timeout_s + 1))

    def to_wire(self) -> dict:
        return {**asdict(self), "cpu_s": self.cpu_seconds}


@dataclass(frozen=True)
class ExecResult:
    """What a run did. ``exit_code`` is negative (-signal) when the process was killed by a signal."""

    exit_code: int
    """The program's exit status; -N when signal N killed it."""
    stdout: str
    """What it wrote to stdout (decoded, up to ``Limits.max_output_bytes``)."""
    stderr: str
    """What it wrote to stderr (decoded, up to ``Limits.max_output_bytes``)."""
    timed_out: bool = False
    """The wall-clock deadline (``Limits.timeout_s``) passed and the process tree was killed."""
    memory_exceeded: bool = False
    """It ran out of memory: the memory cgroup killed a process, or it ended on ``MemoryError``."""
    duration_s: float = 0.0
    """Wall-clock seconds from start to exit."""
    stdout_truncated: bool = False
    """stdout reached ``Limits.max_output_bytes`` and the run was ended."""
    stderr_truncated: bool = False
    """stderr reached ``Limits.max_output_bytes`` and the run was ended."""
    setup_error: str = ""
    """Non-empty when the sandbox itself failed before the program started."""

    @property
    def ok(self) -> bool:
        """Exited 0 within every limit. (For *grading* exit codes prove nothing; see verifiers.code.)"""
        return (
            self.exit_code == 0
            and not (
                self.timed_out
                or self.memory_exceeded
                or self.stdout_truncated
                or self.stderr_truncated
            )
            and not self.setup_error
        )

    @property
    def output_truncated(self) -> bool:
        return self.stdout_truncated or self.stderr_truncated
