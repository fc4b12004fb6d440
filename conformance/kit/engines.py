"""The engines `subsum conform matching` tests (spec/11-plugins.md
DEF-PLUG-3): each runs one workload folder (subscriptions.jsonl and
events.jsonl) and returns what it answered.

- `CommandEngine`: a command, run once per workload as
  `CMD SUBSCRIPTIONS EVENTS`, its result lines read from standard output;
- `PersistentEngine`: a command started once: it reads one request line per
  workload on standard input, `{"subscriptions": PATH, "events": PATH}`,
  and answers with the result lines and then one empty line;
- `PluginEngine`: a Python plug-in engine (subsum.core.plugins).

A time-out, a crash (non-zero exit) and output past `MAX_OUTPUT` are
failures of the answer (`Failure`), never of subsum.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import BinaryIO

import attrs

from subsum.conformance.runner.budget import CheckTimeout, time_limit
from subsum.conformance.kit.processes import (MAX_OUTPUT, STDERR_TAIL, ConformError, describe_exit, kill_group, quote, split_command,
                                              stderr_tail)
from subsum.core.errors import InputError
from subsum.core.jsonio import match_result_lines, read_events, read_subscriptions
from subsum.core.plugins import PluginFailure, running
from subsum.impl.matching import engine_class


@attrs.frozen
class Failure:
    """Why the engine's answer to one workload is wrong. `kind`: timeout,
    crash, malformed or difference."""

    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@attrs.frozen
class Received:
    """What the engine gave for one workload: its standard output, the tail
    of its standard error, and a failure found while running it (time-out, crash)."""

    stdout: bytes
    stderr: bytes = b""
    failure: Failure | None = None


class CommandEngine:
    """`CMD SUBSCRIPTIONS EVENTS`, once per workload, in its own process group."""

    def __init__(self, command: str, timeout: float) -> None:
        self.command, self.argv, self.timeout = command, split_command(command), timeout
        self.stderr_log: BinaryIO | None = None  # --stderr-log: everything it writes to standard error

    def describe(self) -> dict:
        return {"command": self.command, "persistent": False, "timeout": self.timeout}

    def run(self, folder: Path) -> Received:
        argv = self.argv + [str(folder / "subscriptions.jsonl"), str(folder / "events.jsonl")]
        try:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       start_new_session=True)
        except OSError as exc:
            raise ConformError(f"--engine-cmd {self.command!r}: cannot run {argv[0]!r}: {exc.strerror or exc}") from None
        stdout, stderr = bytearray(), bytearray()
        deadline = time.monotonic() + self.timeout
        code: int | None = None
        over = False
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(process.stdout, selectors.EVENT_READ, stdout)  # type: ignore[arg-type]
                selector.register(process.stderr, selectors.EVENT_READ, stderr)  # type: ignore[arg-type]
                while selector.get_map() and not over and time.monotonic() < deadline:
                    exited = process.poll() is not None
                    ready = selector.select(0 if exited else min(0.05, max(0.0, deadline - time.monotonic())))
                    if exited and not ready:
                        break  # it exited, and nothing more is waiting: a child it left holding the pipes is not waited for
                    for key, _ in ready:
                        chunk = os.read(key.fd, 65536)
                        if not chunk:
                            selector.unregister(key.fileobj)
                            continue
                        key.data.extend(chunk)
                        if key.data is stderr and self.stderr_log is not None:
                            self.stderr_log.write(chunk)
                        if len(stderr) > 4 * STDERR_TAIL:
                            del stderr[:-STDERR_TAIL]  # only the tail is quoted: bounded memory
                        over = len(stdout) > MAX_OUTPUT
            if not over:
                code = process.wait(timeout=max(0.001, deadline - time.monotonic()))  # its pipes closed: it is exiting
        except subprocess.TimeoutExpired:
            code = None
        finally:
            kill_group(process)  # its process group: what it left running, or all of it past the time-out or the cap
            for stream in (process.stdout, process.stderr):
                stream.close()  # type: ignore[union-attr]
            if self.stderr_log is not None:
                self.stderr_log.flush()
        if over:
            return Received(b"", bytes(stderr), Failure("malformed", f"wrote more than {MAX_OUTPUT} bytes"))
        if code is None:
            return Received(bytes(stdout), bytes(stderr), Failure("timeout", f"no answer within {self.timeout:g} s{stderr_tail(bytes(stderr))}"))
        if code != 0:
            return Received(bytes(stdout), bytes(stderr), Failure("crash", f"{describe_exit(code)}{stderr_tail(bytes(stderr))}"))
        return Received(bytes(stdout), bytes(stderr))

    def close(self) -> None:
        pass


class PersistentEngine:
    """`CMD`, started once (and again after a failure): a request line per
    workload on its standard input, the result lines and an empty line back."""

    def __init__(self, command: str, timeout: float) -> None:
        self.command, self.argv, self.timeout = command, split_command(command), timeout
        self.process: subprocess.Popen | None = None
        self.stderr: BinaryIO = tempfile.TemporaryFile()
        self.stderr_log: BinaryIO | None = None  # --stderr-log: the process writes its standard error there instead
        self.stderr_start = 0  # where the running process's standard error starts in that file

    def describe(self) -> dict:
        return {"command": self.command, "persistent": True, "timeout": self.timeout}

    def _start(self) -> subprocess.Popen:
        if self.process is None or self.process.poll() is not None:
            if self.stderr_log is not None:
                self.stderr_log.flush()
                self.stderr_start = self.stderr_log.seek(0, 2)
            else:
                self.stderr.seek(0)
                self.stderr.truncate()
            try:
                self.process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                stderr=self.stderr if self.stderr_log is None else self.stderr_log, start_new_session=True)
            except OSError as exc:
                raise ConformError(f"--engine-cmd {self.command!r}: cannot run {self.argv[0]!r}: {exc.strerror or exc}") from None
            os.set_blocking(self.process.stdout.fileno(), False)  # type: ignore[union-attr]
        return self.process

    def _stderr_size(self) -> int:
        """How much standard error the process (and, in a --stderr-log, subsum's headers) has written so far."""
        if self.stderr_log is not None:
            self.stderr_log.flush()
            return os.path.getsize(self.stderr_log.name)
        return self.stderr.seek(0, 2)

    def _stderr_tail(self, since: int = 0) -> bytes:
        """The tail of what the running process wrote to standard error (since offset `since`), without subsum's
        --stderr-log headers."""
        if self.stderr_log is not None:
            end = self._stderr_size()
            with open(self.stderr_log.name, "rb") as log:
                log.seek(max(self.stderr_start, since, end - 4 * STDERR_TAIL))
                text = b"".join(line for line in log.read().splitlines(keepends=True) if not line.startswith(LOG_HEADER))
                return text[-STDERR_TAIL:]
        self.stderr.seek(max(since, self.stderr.seek(0, 2) - STDERR_TAIL))
        return self.stderr.read()

    def run(self, folder: Path) -> Received:
        return self.exchange(json.dumps({"subscriptions": str(folder / "subscriptions.jsonl"), "events": str(folder / "events.jsonl")}))

    def exchange(self, request: str) -> Received:
        """Send one request line; the answer's lines (without the empty line that ends it), or a failure."""
        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        try:
            stale = os.read(process.stdout.fileno(), 65536)  # non-blocking
        except BlockingIOError:
            stale = b""
        if stale:
            return self._failed(b"", "malformed", f"wrote {quote(stale)} after the empty line that ended its previous answer")
        since = self._stderr_size()
        try:
            process.stdin.write(request.encode() + b"\n")
            process.stdin.flush()
        except OSError:  # it closed its standard input: it has exited, or will
            try:
                code = process.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                return self._failed(b"", "crash", "closed its standard input")
            return self._failed(b"", "crash", f"{describe_exit(code)} before ending its answer with an empty line")
        answer = bytearray()
        deadline = time.monotonic() + self.timeout
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            while not (answer.endswith(b"\n\n") or answer == b"\n"):
                left = deadline - time.monotonic()
                if left <= 0:
                    return self._failed(bytes(answer), "timeout", f"no complete answer within {self.timeout:g} s")
                if not selector.select(left):
                    continue
                try:
                    chunk = os.read(process.stdout.fileno(), 65536)
                except BlockingIOError:
                    continue
                if not chunk:  # end of file: the engine exited, or closed its standard output
                    try:
                        code = process.wait(timeout=max(0.1, deadline - time.monotonic()))
                    except subprocess.TimeoutExpired:
                        return self._failed(bytes(answer), "crash", "closed its standard output before ending its answer")
                    return self._failed(bytes(answer), "crash", f"{describe_exit(code)} before ending its answer with an empty line")
                answer += chunk
                if len(answer) > MAX_OUTPUT:
                    return self._failed(b"", "malformed", f"wrote more than {MAX_OUTPUT} bytes")
        return Received(bytes(answer[:-1]), self._stderr_tail(since))  # what it wrote to standard error for this request

    def _failed(self, stdout: bytes, kind: str, message: str) -> Received:
        if self.process is not None:
            kill_group(self.process)
        stderr = self._stderr_tail()
        return Received(stdout, stderr, Failure(kind, message + stderr_tail(stderr)))

    def close(self) -> None:
        """End of input; then the process group goes (what it left running, or all of it after 5 s)."""
        if self.process is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()  # type: ignore[union-attr]
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
            kill_group(self.process)
            with contextlib.suppress(OSError):
                self.process.stdout.close()  # type: ignore[union-attr]
            self.process = None
        if not self.stderr.closed:
            self.stderr.close()


class PluginEngine:
    """A Python plug-in engine, in this process (subsum.core.plugins)."""

    def __init__(self, name: str, timeout: float) -> None:
        self.name, self.timeout, self.cls = name, timeout, engine_class(name)
        self.stderr_log: BinaryIO | None = None  # a plug-in runs in this process: nothing of its own is logged

    def describe(self) -> dict:
        return {"engine": self.name, "timeout": self.timeout}

    def run(self, folder: Path) -> Received:
        try:
            subs = read_subscriptions(folder / "subscriptions.jsonl")
            events = read_events(folder / "events.jsonl")
        except InputError as exc:  # a workload subsum wrote must read back
            raise AssertionError(f"subsum cannot read the workload it wrote: {exc}") from None
        limit = None
        try:
            with time_limit(self.timeout) as limit, running("engine", self.name):
                matched = self.cls([(s.id, s.subscription) for s in subs]).match_batch([e.event for e in events])
                lines = [line.encode() + b"\n" for line in match_result_lines((e.id, sorted(ids)) for e, ids in zip(events, matched))]
        except CheckTimeout:
            if limit is None or not limit.fired:
                raise  # an outer budget, not this engine's time-out
            return Received(b"", b"", Failure("timeout", f"no answer within {self.timeout:g} s"))
        except PluginFailure as exc:
            return Received(b"", b"", Failure("crash", exc.cause))
        return Received(b"".join(lines))

    def close(self) -> None:
        pass


#: how subsum's own lines in a --stderr-log begin (kept out of the standard error a failure quotes)
LOG_HEADER = b"--- subsum conform"


def engine_for(command: str | None, plugin: str | None, persistent: bool, timeout: float):
    """The engine under test that the options name; a command that cannot run is bad usage (exit 2), found
    before anything is written."""
    if (command is None) == (plugin is None):
        raise ConformError("name the engine under test with --engine-cmd CMD or --engine NAME (one of them)")
    if plugin is not None:
        if persistent:
            raise ConformError("--persistent applies to --engine-cmd")
        return PluginEngine(plugin, timeout)
    assert command is not None
    program = split_command(command)[0]
    if shutil.which(program) is None:
        raise ConformError(f"--engine-cmd {command!r}: cannot run {program!r}: no such executable")
    return PersistentEngine(command, timeout) if persistent else CommandEngine(command, timeout)


