"""``passband sandbox doctor``: which isolation is active on this machine, proven by live probes."""

from __future__ import annotations

import argparse
import json

HELP = "Inspect the code sandbox (doctor: which isolation is active here, with live probes)."

# (name, program, what the harness expects of the result) -- each probe is a hostile program.
_PROBES = [
    ("runs a program", "print('ok')", lambda r: r.stdout.strip() == "ok"),
    (
        "own PID namespace (program is pid 1)",
        "import os; print(os.getpid())",
        lambda r: r.stdout.strip() == "1",
    ),
    (
        "no network (TCP to 127.0.0.1:22)",
        "import socket\ntry:\n socket.create_connection(('127.0.0.1', 22), timeout=1); print('open')\n"
        "except OSError as e: print('blocked', e.errno)",
        lambda r: r.stdout.startswith("blocked"),
    ),
    (
        "cannot read /etc/passwd",
        "try:\n open('/etc/passwd').read(); print('read')\nexcept OSError: print('denied')",
        lambda r: r.stdout.strip() == "denied",
    ),
    (
        "cannot write /tmp",
        "try:\n open('/tmp/passband-doctor-probe', 'w').write('x'); print('wrote')\nexcept OSError: print('denied')",
        lambda r: r.stdout.strip() == "denied",
    ),
    (
        "can write its working directory",
        "open('f', 'w').write('x'); print(open('f').read())",
        lambda r: r.stdout.strip() == "x",
    ),
    ("wall-clock timeout kills it", "while True: pass", lambda r: r.timed_out),
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="sandbox_command", metavar="SUBCOMMAND")
    doctor = sub.add_parser(
        "doctor", help="print the active isolation mechanisms and run live probes"
    )
    doctor.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace) -> int:
    from passband.errors import UsageError

    if getattr(args, "sandbox_command", None) != "doctor":
        raise UsageError("choose a subcommand: passband sandbox doctor")
    return _doctor(args.json)


def _doctor(as_json: bool) -> int:
    from passband.sandbox import Limits, Pool, SandboxError, capabilities

    try:
        with Pool(1) as pool:
            report = capabilities(pool)
            probes = {
                name: bool(check(pool.run(code, limits=Limits(timeout_s=1.0))))
                for name, code, check in _PROBES
            }
    except SandboxError as exc:
        print(f"sandbox doctor: the sandbox could not start: {exc}")
        return 1
    if as_json:
        print(json.dumps({"mechanisms": report, "probes": probes}, indent=2))
    else:
        print("Isolation mechanisms (as a worker reports them):")
        for name, state in report.items():
            print(f"  {name:28s} {state}")
        print("Live probes (hostile programs):")
        for name, ok in probes.items():
            print(f"  [{'ok' if ok else 'FAIL'}] {name}")
    return 0 if all(probes.values()) else 1
