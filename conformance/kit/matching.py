"""`subsum conform matching`: a user's matching engine, in any language,
against the model (spec/11-plugins.md DEF-PLUG-3, DEF-PLUG-4, DEF-PLUG-7,
DEF-PLUG-8).

The pinned workloads run first (`pinned`: each operator's edge cases, the
hostile characters), then generated workload 0, 1, … of the seed
(`draws`: workload i depends on the seed and i alone). Each is written as
two files, the engine under test (`engines`) answers, and the answer is
compared with the model's. A time-out, a crash, output that is not result
lines and a result that differs from the model's are failures. A failure
is run again (a different answer is `not-deterministic`), shrunk (`shrink`)
and saved as a replay directory that `subsum replay DIR` runs again. With
`keep_going` above 1 the run goes on after a failure, until that many
failures that differ in kind, direction and what they use
(`findings.Signature`) are found; a failure like one already found is
counted, not saved again. Nothing the profile leaves out is ever sent.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

import attrs

from subsum.conformance.kit.draws import draw_workload
from subsum.conformance.kit.engines import LOG_HEADER, Failure, Received
from subsum.conformance.kit.findings import Finding, Signature, blanked, received_results, signature, unshrunk_traits
from subsum.conformance.kit.pinned import pinned_workloads
from subsum.conformance.kit.profile import Profile, Used, features_of
from subsum.conformance.kit.shrink import shrink_workload
from subsum.conformance.kit.workloads import expected_lines, first_failure, model_results, write_workload
from subsum.conformance.replays import documents
from subsum.conformance.replays.writing import save_matching

#: the failures worth shrinking: a time-out would cost the time-out once per candidate
SHRUNK = ("difference", "malformed", "crash")


@attrs.define
class ConformResult:
    """What a run found: the workloads run (the pinned ones, then generated ones), the distinct failures."""

    profile: Profile = Profile()
    workloads: int = 0
    pinned: int = 0
    findings: list[Finding] = attrs.Factory(list)
    seconds: float = 0.0
    interrupted: bool = False
    exercised: Used | None = None  # what the run sent, when it is one workload (--only); else what the profile allows

    @property
    def generated(self) -> int:
        return self.workloads - self.pinned

    @property
    def failure(self) -> Failure | None:
        """The first failure found (None for a pass)."""
        return None if not self.findings else Failure(self.findings[0].signature.kind, self.findings[0].message)

    @property
    def replay(self) -> Path | None:
        return self.findings[0].replay if self.findings else None


def is_number(text: str) -> bool:
    """Digits 0-9 only (`str.isdigit` also takes ² and other scripts' digits)."""
    return text.isascii() and text.isdigit()


def workload_cases(profile: Profile, seed: int, workloads: int, only: str | None) -> Iterator[tuple[str, bool, tuple]]:
    """(label, pinned?, workload) in the order they run: the pinned ones, then generated 0 … workloads − 1;
    with `only`, just that one (a number, or a pinned workload's name)."""
    if only is not None and is_number(only):
        yield f"workload {int(only)}", False, draw_workload(seed, int(only), profile)
        return
    for name, workload in pinned_workloads(profile):
        if only is None or only == name:
            yield f"pinned {name}", True, workload
    if only is None:
        for i in range(workloads):
            yield f"workload {i}", False, draw_workload(seed, i, profile)


class ConformRun:
    """One run of the kit against one engine; `run` returns its result."""

    def __init__(self, engine, *, seed: int, out_dir: Path, profile: Profile, keep_going: int, shrink_budget: float,
                 stderr_log: BinaryIO | None) -> None:
        self.engine, self.seed, self.out_dir, self.profile = engine, seed, out_dir, profile
        self.keep_going, self.shrink_budget, self.stderr_log = keep_going, shrink_budget, stderr_log
        self.result = ConformResult(profile)
        self.only = False  # set by `conform` for --only: the report's "checked" is then that one workload's
        self.pending: tuple | None = None  # the failure being run again or shrunk (kept if Ctrl-C comes)
        self.scratch = Path(tempfile.mkdtemp(prefix="subsum-conform-"))

    def check(self, workload, label: str = "") -> tuple[Failure | None, Received, list]:
        """Write the workload, run the engine on it, compare with the model: (failure, what it gave, the model's results)."""
        if self.stderr_log is not None and label:
            self.stderr_log.write(LOG_HEADER + f": {label} (seed {self.seed}) ---\n".encode())
            self.stderr_log.flush()
        write_workload(self.scratch, *workload)
        expected = model_results(self.scratch)
        received = self.engine.run(self.scratch)
        return first_failure(expected, received), received, expected

    def run(self, cases: Iterator[tuple[str, bool, tuple]], progress: Callable[[int], None] | None) -> ConformResult:
        started = time.perf_counter()
        try:
            for label, pinned, workload in cases:
                failure, received, expected = self.check(workload, label)
                self.result.workloads += 1  # counted once the engine has answered it
                self.result.pinned += pinned
                if self.only:
                    self.result.exercised = features_of(*workload)
                if failure is not None:
                    self.pending = (label, workload, failure, received)
                    self.on_failure(label, workload, failure, received, expected)
                    self.pending = None
                    if len(self.result.findings) >= self.keep_going:
                        break
                if progress:
                    progress(self.result.workloads)
        except KeyboardInterrupt:  # Ctrl-C: what was found is kept; the CLI reports it and exits 130
            self.result.interrupted = True
            if self.pending is not None:  # a failure being run again or shrunk: saved as far as it got
                label, workload, failure, received = self.pending
                self.record(Signature(failure.kind, "-", ("interrupted",), blanked(failure.message)),
                            f"{failure.message} (Ctrl-C while it was being shrunk: saved as far as it got)", label, workload, received)
        finally:
            self.engine.close()
            for path in self.scratch.iterdir():
                path.unlink()
            self.scratch.rmdir()
        self.result.seconds = time.perf_counter() - started
        return self.result

    def on_failure(self, label: str, workload, failure: Failure, received: Received, expected: list) -> None:
        """Run it again, tell whether it is new, shrink it and save it; or count it against the one it repeats."""
        again, received_again, _ = self.check(workload, f"{label}, again")
        if again is None or again.kind != failure.kind:
            message = (f"{failure.message} (it did not happen again on the same workload: the engine is not deterministic, "
                       "or keeps state between workloads)")
            self.record(Signature(failure.kind, "-", ("not deterministic",), blanked(failure.message)), message, label, workload, received)
            return
        got = received_results(received.stdout)
        first = signature(workload, failure.kind, got, expected, failure.message)
        traits = unshrunk_traits(workload, got, expected) or frozenset(first.traits)
        for known in self.result.findings:
            if first.covered_by(known.signature, traits):
                known.seen += 1
                return
        if failure.kind in SHRUNK and self.shrink_budget > 0:
            workload, failure, received, expected = self.shrink(label, workload, failure, received, expected, first)
            first = signature(workload, failure.kind, received_results(received.stdout), expected, failure.message)
        self.record(first, failure.message, label, workload, received)

    def shrink(self, label: str, workload, failure: Failure, received: Received, expected: list, first: Signature):
        """The smallest workload on which the engine fails the same way: the same kind and, for a difference, the
        same direction (or one of the two, for an extra and a missed match: two bugs are split, not kept together),
        for another failure the same blanked message."""
        best = [workload, failure, received, expected]

        def still_fails(candidate) -> bool:
            found, got, expected = self.check(candidate, f"{label}, shrinking")
            if found is None or found.kind != failure.kind:
                return False
            if found.kind != "difference" and blanked(found.message) != blanked(failure.message):
                return False  # a crash that says something else is another bug
            if found.kind == "difference":
                direction = signature(candidate, found.kind, received_results(got.stdout), expected).direction
                if direction != first.direction and first.direction != "extra and missed":
                    return False
            best[:] = [candidate, found, got, expected]
            self.pending = (label, candidate, found, got)
            return True

        shrink_workload(workload, still_fails, self.shrink_budget)
        return tuple(best)

    def record(self, sig: Signature, message: str, label: str, workload, received: Received) -> None:
        for known in self.result.findings:
            if known.signature.key == sig.key:
                known.seen += 1
                return
        replay = save_case(self.out_dir, self.engine.describe(), workload, received, Failure(sig.kind, message), self.seed,
                           {"found_at": f"seed {self.seed}, {label}", "workload": label.removeprefix("workload ").removeprefix("pinned "),
                            **self.profile.to_json()})
        self.result.findings.append(Finding(sig, message, label, replay))


def conform(engine, *, workloads: int = 1000, seed: int = 0, out_dir: Path = documents.CONFORM_FOLDER,
            progress: Callable[[int], None] | None = None, keep_going: int = 1, only: str | None = None,
            profile: Profile = Profile(), shrink_budget: float = 60.0, stderr_log: BinaryIO | None = None) -> ConformResult:
    """Run the pinned workloads and then generated workloads 0 … `workloads` − 1 (or only workload `only`)
    through the engine, within `profile`, until `keep_going` distinct failures are found."""
    run = ConformRun(engine, seed=seed, out_dir=out_dir, profile=profile, keep_going=keep_going, shrink_budget=shrink_budget,
                     stderr_log=stderr_log)
    run.only = only is not None
    return run.run(workload_cases(profile, seed, workloads, only), progress)


def save_case(out_dir: Path, engine: dict, workload, received: Received, failure: Failure, seed: int, extra: dict) -> Path:
    """The replay directory of a failure: the two inputs, the model's lines,
    the engine's output and standard error, and case.json."""
    with tempfile.TemporaryDirectory() as scratch:
        write_workload(Path(scratch), *workload)
        files = {name: (Path(scratch) / name).read_bytes() for name in ("subscriptions.jsonl", "events.jsonl")}
        files["expected.jsonl"] = b"".join(line + b"\n" for line in expected_lines(model_results(Path(scratch))))
    files["received.jsonl"], files["stderr.txt"] = received.stdout, received.stderr
    return save_matching(out_dir, files, engine, seed, {"kind": failure.kind, "message": failure.message}, extra)
