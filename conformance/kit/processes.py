"""Running a user's program under test (spec/11-plugins.md DEF-PLUG-3,
DEF-PLUG-6): its command line, its process group, how it ended, and what
of its output a failure quotes.

>>> split_command("engine --fast 'a b'")
['engine', '--fast', 'a b']
>>> describe_exit(-9), describe_exit(2)
('was killed by SIGKILL', 'exited with status 2')
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess

from subsum.conformance.runner.violations import CannotCheck

#: Output an engine may write for one workload; more is a failure, not a memory problem.
MAX_OUTPUT = 16 * 1024 * 1024
#: How much of a program's standard error a failure quotes.
STDERR_TAIL = 2000


class ConformError(CannotCheck):
    """A replay directory or a command under test that cannot be used (exit 2)."""


def split_command(command: str, option: str = "--engine-cmd") -> list[str]:
    """The argv of `command`, split like a POSIX shell would (no shell runs
    it); `option` names the option it came from, for the error."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ConformError(f"{option} {command!r}: {exc}") from None
    if not argv:
        raise ConformError(f"{option} is empty")
    return argv


def kill_group(process: subprocess.Popen) -> None:
    """Kill the process group the program runs in (what it left running too), and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


def quote(raw: bytes, limit: int = 200) -> str:
    """Output quoted in a message: at most `limit` bytes, escapes for what is not UTF-8."""
    text = raw[:limit].decode("utf-8", "backslashreplace")
    return repr(text) + ("…" if len(raw) > limit else "")


def stderr_tail(raw: bytes) -> str:
    """The end of a program's standard error, as a clause of a failure's message."""
    text = raw[-STDERR_TAIL:].decode("utf-8", "backslashreplace").strip()
    return f"; its standard error ends: {text}" if text else ""
