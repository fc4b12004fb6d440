"""`subsum conform matching` and `subsum conform replay`: a user's matching
engine, in any language, tested against the model (spec/11-plugins.md
DEF-PLUG-3, DEF-PLUG-4).

Hypothesis draws workloads; each is written as a subscriptions file and an
events file in the formats of spec/formats.md; the engine under test
matches them; its result lines are compared with the model's
(`subsum.model.semantics.match_batch`). The engine is one of:

- a command, run once per workload as `CMD SUBSCRIPTIONS EVENTS`, its
  result lines read from standard output (`CommandEngine`);
- a command in persistent mode, started once: it reads one request line
  per workload on standard input, `{"subscriptions": PATH, "events": PATH}`,
  and answers with the result lines and then one empty line
  (`PersistentEngine`);
- a Python plug-in engine (`PluginEngine`; subsum.core.plugins).

A time-out, a crash (non-zero exit), output that is not result lines, and
a result that differs from the model's are all failures. Hypothesis shrinks
the first failure to a minimal workload, saved as a replay directory that
`subsum conform replay DIR` runs again.

>>> [line.decode() for line in expected_lines([("e1", {"s2", "s10"})])]
['{"event": "e1", "subscriptions": ["s10", "s2"]}']
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import selectors
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

import attrs
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Flaky
from hypothesis import strategies as st

from subsum.conformance import strategies as gen
from subsum.conformance.budget import CheckTimeout, time_limit
from subsum.core.errors import InputError, SubsumError
from subsum.core.filters import format_filter
from subsum.core.inputs import read_input_text
from subsum.core.jsonio import match_result_lines, read_events, read_subscriptions
from subsum.core.types import Attribute, Constraint, Event, Subscription
from subsum.model import semantics

CASE_FORMAT = "subsum-conform-matching"
#: Output an engine may write for one workload; more is a failure, not a memory problem.
MAX_OUTPUT = 16 * 1024 * 1024
#: How much of an engine's standard error a failure quotes.
STDERR_TAIL = 2000
#: Strings with the characters a reader or a query language gets wrong: JSON
#: escapes, SQL wildcards and escapes, a NUL, a newline, non-ASCII and astral.
HOSTILE_ALPHABET = 'ab*%_\\"\n\x00é\U0001F600'


class ConformError(SubsumError):
    """A replay directory or an engine command that cannot be used (exit 2)."""


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


# --- workloads and the expected lines -------------------------------------------------------

@st.composite
def hostile_string_workloads(draw):
    """Equality and string operators over `HOSTILE_ALPHABET`, with planted matches."""
    text = st.text(alphabet=HOSTILE_ALPHABET, max_size=4)
    subs = []
    for _ in range(draw(st.integers(1, 5))):
        op = draw(st.sampled_from(["=", "!=", "prefix", "suffix", "contains", "wildcard"]))
        value = f"{draw(text.filter(lambda t: '*' not in t))}*{draw(text.filter(lambda t: '*' not in t))}" if op == "wildcard" \
            else draw(text)
        subs.append(Subscription(frozenset({Constraint(draw(st.sampled_from(["s", "t"])), "string", op, value)})))
    events = [Event(tuple(Attribute(n, "string", draw(text)) for n in draw(st.lists(st.sampled_from(["s", "t"]), unique=True))))
              for _ in range(draw(st.integers(0, 5)))]
    return [(f"s{i}", s) for i, s in enumerate(subs)], events


def generated_workloads() -> st.SearchStrategy:
    """(subscriptions, events, forms): the model's generators (spec/03 CLM-ENG-1)
    plus hostile strings; `forms` says, per subscription, whether it is written
    with `constraints` (True) or as a `filter` text."""
    base = st.one_of(gen.workloads(), gen.string_workloads(), gen.numeric_workloads(), hostile_string_workloads()).map(
        lambda w: (list(w[0]) or [("s0", Subscription())], list(w[1]) or [Event()]))  # the formats want a line in each file
    return base.flatmap(lambda w: st.tuples(st.just(w[0]), st.just(w[1]), st.lists(st.booleans(), min_size=len(w[0]),
                                                                                    max_size=len(w[0]))))


def subscription_line(sid: str, subscription: Subscription, as_constraints: bool) -> str:
    """One subscriptions line (spec/formats.md); the empty subscription has only the constraints form."""
    if as_constraints or not subscription.constraints:
        constraints = [{"name": c.name, "type": c.type, "op": c.op, **({} if c.op == "any" else {"value": c.value})}
                       for c in sorted(subscription.constraints, key=lambda c: (c.name, c.type, c.op, repr(c.value)))]
        return json.dumps({"id": sid, "constraints": constraints})
    return json.dumps({"id": sid, "filter": format_filter(subscription)})


def event_line(eid: str, event: Event) -> str:
    """One events line (spec/formats.md): a float is written with a fraction or an exponent."""
    return json.dumps({"id": eid, "attributes": {a.name: a.value for a in event.attributes}})


def write_workload(folder: Path, subscriptions: list, events: list, forms: list) -> list[str]:
    """Write subscriptions.jsonl and events.jsonl into `folder`; the event ids."""
    ids = [f"e{i}" for i in range(len(events))]
    (folder / "subscriptions.jsonl").write_text("".join(subscription_line(sid, s, f) + "\n"
                                                        for (sid, s), f in zip(subscriptions, forms)))
    (folder / "events.jsonl").write_text("".join(event_line(eid, e) + "\n" for eid, e in zip(ids, events)))
    return ids


def expected_lines(results) -> list[bytes]:
    """The result lines of spec/formats.md for (event id, ids) pairs."""
    return [line.encode() for line in match_result_lines((eid, sorted(ids)) for eid, ids in results)]


def model_results(folder: Path) -> list[tuple[str, set[str]]]:
    """The model's (event id, matching ids) for the workload in `folder`, read back from its files."""
    subs = read_subscriptions(folder / "subscriptions.jsonl")
    events = read_events(folder / "events.jsonl")
    matched = semantics.match_batch([(s.id, s.subscription) for s in subs], [e.event for e in events])
    return [(e.id, ids) for e, ids in zip(events, matched)]


# --- comparing ------------------------------------------------------------------------------

def first_failure(expected: list[tuple[str, set[str]]], received: Received) -> Failure | None:
    """The first way `received` falls short of `expected`: its own failure,
    a line that is not a result line (spec/formats.md), or a line that
    differs from the model's. Whitespace and key order are free."""
    if received.failure is not None:
        return received.failure
    text = received.stdout
    lines = text.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for i, raw in enumerate(lines, 1):
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            return Failure("malformed", f"output line {i} is not JSON ({exc}): {_quote(raw)}")
        if not (isinstance(obj, dict) and set(obj) == {"event", "subscriptions"} and isinstance(obj["event"], str)
                and isinstance(obj["subscriptions"], list) and all(isinstance(s, str) for s in obj["subscriptions"])):
            return Failure("malformed", f"output line {i} is not {{\"event\": ID, \"subscriptions\": [IDs]}}: {_quote(raw)}")
        if i > len(expected):
            return Failure("malformed", f"{len(lines)} output lines for {len(expected)} events")
        eid, want = expected[i - 1]
        got = obj["subscriptions"]
        if obj["event"] != eid:
            return Failure("malformed", f"output line {i} is for event {obj['event']!r}; line {i} must be for event {eid!r} (input order)")
        if got != sorted(set(got)):
            return Failure("malformed", f"output line {i}: the ids {got} are not sorted by code point without repeats")
        if set(got) != want:
            extra, missing = sorted(set(got) - want), sorted(want - set(got))
            return Failure("difference", f"event {eid}: the engine matched {got}, the model {sorted(want)}"
                                         + (f"; extra {extra}" if extra else "") + (f"; missing {missing}" if missing else ""))
    if len(lines) != len(expected):
        return Failure("malformed", f"{len(lines)} output lines for {len(expected)} events")
    return None


def _quote(raw: bytes, limit: int = 200) -> str:
    text = raw[:limit].decode("utf-8", "backslashreplace")
    return repr(text) + ("…" if len(raw) > limit else "")


def _tail(raw: bytes) -> str:
    text = raw[-STDERR_TAIL:].decode("utf-8", "backslashreplace").strip()
    return f"; its standard error ends: {text}" if text else ""


# --- the engines under test -----------------------------------------------------------------

def split_command(command: str) -> list[str]:
    """The argv of `command`, split like a POSIX shell would (no shell runs it)."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ConformError(f"--engine-cmd {command!r}: {exc}") from None
    if not argv:
        raise ConformError("--engine-cmd is empty")
    return argv


def _kill(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


class CommandEngine:
    """`CMD SUBSCRIPTIONS EVENTS`, once per workload, in its own process group."""

    def __init__(self, command: str, timeout: float) -> None:
        self.command, self.argv, self.timeout = command, split_command(command), timeout

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
                        if len(stderr) > 4 * STDERR_TAIL:
                            del stderr[:-STDERR_TAIL]  # only the tail is quoted: bounded memory
                        over = len(stdout) > MAX_OUTPUT
            if not over:
                code = process.wait(timeout=max(0.001, deadline - time.monotonic()))  # its pipes closed: it is exiting
        except subprocess.TimeoutExpired:
            code = None
        finally:
            _kill(process)  # its process group: what it left running, or all of it past the time-out or the cap
            for stream in (process.stdout, process.stderr):
                stream.close()  # type: ignore[union-attr]
        if over:
            return Received(b"", bytes(stderr), Failure("malformed", f"wrote more than {MAX_OUTPUT} bytes"))
        if code is None:
            return Received(bytes(stdout), bytes(stderr), Failure("timeout", f"no answer within {self.timeout:g} s{_tail(bytes(stderr))}"))
        if code != 0:
            return Received(bytes(stdout), bytes(stderr), Failure("crash", f"{_describe_exit(code)}{_tail(bytes(stderr))}"))
        return Received(bytes(stdout), bytes(stderr))

    def close(self) -> None:
        pass


class PersistentEngine:
    """`CMD`, started once (and again after a failure): a request line per
    workload on its standard input, the result lines and an empty line back."""

    def __init__(self, command: str, timeout: float) -> None:
        self.command, self.argv, self.timeout = command, split_command(command), timeout
        self.process: subprocess.Popen | None = None
        self.stderr = tempfile.TemporaryFile()

    def describe(self) -> dict:
        return {"command": self.command, "persistent": True, "timeout": self.timeout}

    def _start(self) -> subprocess.Popen:
        if self.process is None or self.process.poll() is not None:
            self.stderr.seek(0)
            self.stderr.truncate()
            try:
                self.process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                                start_new_session=True)
            except OSError as exc:
                raise ConformError(f"--engine-cmd {self.command!r}: cannot run {self.argv[0]!r}: {exc.strerror or exc}") from None
            os.set_blocking(self.process.stdout.fileno(), False)  # type: ignore[union-attr]
        return self.process

    def _stderr_tail(self) -> bytes:
        self.stderr.seek(max(0, self.stderr.seek(0, 2) - STDERR_TAIL))
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
            return self._failed(b"", "malformed", f"wrote {_quote(stale)} after the empty line that ended its previous answer")
        try:
            process.stdin.write(request.encode() + b"\n")
            process.stdin.flush()
        except OSError:  # it closed its standard input: it has exited, or will
            try:
                code = process.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                return self._failed(b"", "crash", "closed its standard input")
            return self._failed(b"", "crash", f"{_describe_exit(code)} before ending its answer with an empty line")
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
                    return self._failed(bytes(answer), "crash", f"{_describe_exit(code)} before ending its answer with an empty line")
                answer += chunk
                if len(answer) > MAX_OUTPUT:
                    return self._failed(b"", "malformed", f"wrote more than {MAX_OUTPUT} bytes")
        return Received(bytes(answer[:-1]), b"")

    def _failed(self, stdout: bytes, kind: str, message: str) -> Received:
        if self.process is not None:
            _kill(self.process)
        stderr = self._stderr_tail()
        return Received(stdout, stderr, Failure(kind, message + _tail(stderr)))

    def close(self) -> None:
        """End of input; then the process group goes (what it left running, or all of it after 5 s)."""
        if self.process is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()  # type: ignore[union-attr]
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
            _kill(self.process)
            with contextlib.suppress(OSError):
                self.process.stdout.close()  # type: ignore[union-attr]
            self.process = None
        if not self.stderr.closed:
            self.stderr.close()


class PluginEngine:
    """A Python plug-in engine, in this process (subsum.core.plugins)."""

    def __init__(self, name: str, timeout: float) -> None:
        from subsum.impl.matching import engine_class

        self.name, self.timeout, self.cls = name, timeout, engine_class(name)

    def describe(self) -> dict:
        return {"engine": self.name, "timeout": self.timeout}

    def run(self, folder: Path) -> Received:
        try:
            subs = read_subscriptions(folder / "subscriptions.jsonl")
            events = read_events(folder / "events.jsonl")
        except InputError as exc:  # a workload subsum wrote must read back
            raise AssertionError(f"subsum cannot read the workload it wrote: {exc}") from None
        try:
            with time_limit(self.timeout) as limit:
                try:
                    matched = self.cls([(s.id, s.subscription) for s in subs]).match_batch([e.event for e in events])
                except CheckTimeout:
                    assert limit.fired
                    return Received(b"", b"", Failure("timeout", f"no answer within {self.timeout:g} s"))
            lines = b"".join(line + b"\n" for line in expected_lines((e.id, set(ids)) for e, ids in zip(events, matched)))
        except Exception as exc:  # the plug-in failed
            return Received(b"", b"", Failure("crash", f"{type(exc).__name__}: {exc}"))
        return Received(lines)

    def close(self) -> None:
        pass


def engine_for(command: str | None, plugin: str | None, persistent: bool, timeout: float):
    """The engine under test that the options name."""
    if (command is None) == (plugin is None):
        raise ConformError("name the engine under test with --engine-cmd CMD or --engine NAME (one of them)")
    if plugin is not None:
        if persistent:
            raise ConformError("--persistent applies to --engine-cmd")
        return PluginEngine(plugin, timeout)
    assert command is not None
    return PersistentEngine(command, timeout) if persistent else CommandEngine(command, timeout)


# --- one workload, many workloads, replay directories ----------------------------------------

def check_workload(engine, folder: Path, subscriptions: list, events: list, forms: list) -> tuple[Failure | None, Received]:
    """Write the workload into `folder`, run the engine on it, compare with the model."""
    write_workload(folder, subscriptions, events, forms)
    expected = model_results(folder)
    received = engine.run(folder)
    return first_failure(expected, received), received


@attrs.define
class ConformResult:
    workloads: int = 0
    failure: Failure | None = None
    replay: Path | None = None
    seconds: float = 0.0


class _Disagreement(Exception):
    pass


def conform(engine, *, workloads: int = 1000, seed: int = 0, out_dir: Path = Path("conform-replays"),
            progress: Callable[[int], None] | None = None) -> ConformResult:
    """Run `workloads` generated workloads (Hypothesis, seeded) through the
    engine; on the first failure, shrink it and save the minimal workload as a
    replay directory under `out_dir`."""
    result = ConformResult()
    last: list = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="subsum-conform-") as scratch:
        folder = Path(scratch)

        @hypothesis_seed(seed)
        @settings(max_examples=workloads, database=None, deadline=None, derandomize=False, report_multiple_bugs=False,
                  suppress_health_check=list(HealthCheck), phases=(Phase.generate, Phase.shrink), print_blob=False)
        @given(generated_workloads())
        def agrees(workload) -> None:
            subscriptions, events, forms = workload
            if not last:  # still generating: count it (shrinking runs are not counted)
                result.workloads += 1
                if progress:
                    progress(result.workloads)
            failure, received = check_workload(engine, folder, subscriptions, events, forms)
            if failure is not None:
                last[:] = [failure, workload, received]
                raise _Disagreement(str(failure))

        try:
            agrees()
        except (_Disagreement, Flaky):  # Flaky: a failure that did not repeat when Hypothesis ran the workload again
            failure, workload, received = last
            if not isinstance(sys.exception(), _Disagreement):
                failure = Failure(failure.kind, f"{failure.message} (it did not happen again on the same workload: the engine "
                                                f"is not deterministic, or keeps state between workloads)")
            result.failure = failure
            result.replay = save_case(out_dir, engine.describe(), workload, received, failure, seed)
        finally:
            engine.close()
    result.seconds = time.perf_counter() - started
    return result


def save_case(out_dir: Path, engine: dict, workload, received: Received, failure: Failure, seed: int) -> Path:
    """A replay directory: the two inputs, the model's lines, the engine's
    output and standard error, and case.json (the engine and the failure)."""
    subscriptions, events, forms = workload
    with tempfile.TemporaryDirectory() as scratch:
        write_workload(Path(scratch), subscriptions, events, forms)
        inputs = {name: (Path(scratch) / name).read_bytes() for name in ("subscriptions.jsonl", "events.jsonl")}
        expected = model_results(Path(scratch))
    digest = hashlib.sha256(inputs["subscriptions.jsonl"] + b"\0" + inputs["events.jsonl"]).hexdigest()[:10]
    folder = out_dir / f"matching-{digest}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConformError(f"found a failure ({failure}) but cannot write its replay directory {folder}: {exc.strerror or exc}") from None
    for name, data in inputs.items():
        (folder / name).write_bytes(data)
    (folder / "expected.jsonl").write_bytes(b"".join(line + b"\n" for line in expected_lines(expected)))
    (folder / "received.jsonl").write_bytes(received.stdout)
    (folder / "stderr.txt").write_bytes(received.stderr)
    case = {"format": CASE_FORMAT, "version": 1, "engine": engine, "seed": seed,
            "failure": {"kind": failure.kind, "message": failure.message}}
    (folder / "case.json").write_text(json.dumps(case, indent=1, ensure_ascii=False) + "\n")
    return folder


def load_case(folder: Path) -> dict:
    """case.json of a replay directory, read with subsum's bounded reader and
    checked field by field (exit 2 naming what is wrong)."""
    path = folder / "case.json"
    if not folder.is_dir():
        raise ConformError(f"{folder}: not a directory (a replay directory written by `subsum conform matching`)")
    if not path.exists():
        raise ConformError(f"{folder}: no case.json; not a replay directory of `subsum conform matching`")
    try:
        case = json.loads(read_input_text(path))
    except RecursionError:
        raise InputError(str(path), None, None, "malformed JSON: nested too deeply") from None
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(str(path), None, None, f"malformed JSON: {exc}") from None

    def wrong(field: str, expected: str, got: object) -> InputError:
        return InputError(str(path), None, field, f"expected {expected}, got {json.dumps(got)[:80]}")

    if not isinstance(case, dict) or case.get("format") != CASE_FORMAT:
        raise InputError(str(path), None, "format", f"expected {CASE_FORMAT!r}")
    if case.get("version") != 1 or isinstance(case.get("version"), bool):
        raise wrong("version", "1", case.get("version"))
    engine = case.get("engine")
    if not isinstance(engine, dict) or not isinstance(engine.get("command", engine.get("engine")), str):
        raise wrong("engine", '{"command": CMD, ...} or {"engine": NAME, ...}', engine)
    timeout = engine.get("timeout", 10.0)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0.001 <= timeout <= 3600:
        raise wrong("engine.timeout", "seconds, a number from 0.001 to 3600", timeout)
    if not isinstance(engine.get("persistent", False), bool):
        raise wrong("engine.persistent", "true or false", engine.get("persistent"))
    failure = case.get("failure", {})
    if not (isinstance(failure, dict) and all(isinstance(failure.get(k, ""), str) for k in ("kind", "message"))):
        raise wrong("failure", '{"kind": text, "message": text}', failure)
    for name in ("subscriptions.jsonl", "events.jsonl"):
        if not (folder / name).is_file():
            raise ConformError(f"{folder}: {name} is missing")
    return case


def replay(folder: Path, engine) -> tuple[Failure | None, Iterator[str]]:
    """Run the engine on a replay directory's inputs; the failure (or None)
    and notes (an expected.jsonl that no longer is the model's)."""
    notes = []
    expected = model_results(folder)
    stored = folder / "expected.jsonl"
    if stored.is_file() and stored.read_bytes() != b"".join(line + b"\n" for line in expected_lines(expected)):
        notes.append(f"{stored} differs from the model's lines now; compared with the model's")
    try:
        received = engine.run(folder)
    finally:
        engine.close()
    return first_failure(expected, received), iter(notes)
