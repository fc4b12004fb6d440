"""`subsum conform matching`: a user's matching engine, in any language,
against the model on generated workloads (spec/11-plugins.md DEF-PLUG-3,
DEF-PLUG-4).

Pinned workloads of the hostile characters run first, then Hypothesis
draws workloads (`workloads.generated_workloads`); each is written as two files, the engine under test (`engines`) answers, and the
answer is compared with the model's. A time-out, a crash, output that is
not result lines, and a result that differs from the model's are all
failures. Hypothesis shrinks the first to a minimal workload (a pinned
one is shrunk line by line, `shrink_pinned`), saved as a replay directory (`subsum.conformance.replays`) that `subsum replay DIR`
runs again.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import attrs
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Flaky

from subsum.conformance.kit.engines import Failure, Received
from subsum.conformance.kit.workloads import (expected_lines, first_failure, generated_workloads, model_results, pinned_workloads,
                                              write_workload)
from subsum.conformance.replays import documents
from subsum.conformance.replays.writing import save_matching


def check_workload(engine, folder: Path, subscriptions: list, events: list, forms: list) -> tuple[Failure | None, Received]:
    """Write the workload into `folder`, run the engine on it, compare with the model."""
    write_workload(folder, subscriptions, events, forms)
    expected = model_results(folder)
    received = engine.run(folder)
    return first_failure(expected, received), received


@attrs.define
class ConformResult:
    """What a run found: `workloads` run before the first failure or the
    end (the pinned ones, then `generated` ones), the failure and its replay."""
    workloads: int = 0
    pinned: int = 0
    failure: Failure | None = None
    replay: Path | None = None
    seconds: float = 0.0


class _Disagreement(Exception):
    pass


def conform(engine, *, workloads: int = 1000, seed: int = 0, out_dir: Path = documents.CONFORM_FOLDER,
            progress: Callable[[int], None] | None = None) -> ConformResult:
    """Run the pinned workloads and then `workloads` generated ones
    (Hypothesis, seeded) through the engine; on the first failure, shrink it
    and save the minimal workload as a replay directory under `out_dir`."""
    result = ConformResult()
    last: list = []
    pinned = pinned_workloads()
    pinned_ids = {id(workload) for workload in pinned}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="subsum-conform-") as scratch:
        folder = Path(scratch)

        @hypothesis_seed(seed)
        @settings(max_examples=workloads, database=None, deadline=None, derandomize=False, report_multiple_bugs=False,
                  suppress_health_check=list(HealthCheck), phases=(Phase.explicit, Phase.generate, Phase.shrink), print_blob=False)
        @given(generated_workloads())
        def agrees(workload) -> None:
            subscriptions, events, forms = workload
            if not last:  # still generating: count it (shrinking runs are not counted)
                result.workloads += 1
                result.pinned += id(workload) in pinned_ids
                if progress:
                    progress(result.workloads)
            failure, received = check_workload(engine, folder, subscriptions, events, forms)
            if failure is not None:
                last[:] = [failure, workload, received]
                raise _Disagreement(str(failure))

        for workload in reversed(pinned):  # run first, in this order
            agrees = example(workload)(agrees)
        try:
            agrees()
        except (_Disagreement, Flaky):  # Flaky: a failure that did not repeat when Hypothesis ran the workload again
            failure, workload, received = last
            # Hypothesis runs a failing pinned workload once: run it again here, so that it too must repeat
            repeated = isinstance(sys.exception(), _Disagreement) and check_workload(engine, folder, *workload)[0] is not None
            if not repeated:
                failure = Failure(failure.kind, f"{failure.message} (it did not happen again on the same workload: the engine "
                                                f"is not deterministic, or keeps state between workloads)")
            elif id(workload) in pinned_ids and failure.kind in SHRUNK_WHEN_PINNED:  # Hypothesis does not shrink an explicit example
                failure, workload, received = shrink_pinned(engine, folder, workload, failure, received)
            result.failure = failure
            result.replay = save_case(out_dir, engine.describe(), workload, received, failure, seed)
        finally:
            engine.close()
    result.seconds = time.perf_counter() - started
    return result


#: the failures of a pinned workload worth shrinking: what the engine answered (a time-out or a crash would cost one
#: engine start, and perhaps one time-out, per line tried)
SHRUNK_WHEN_PINNED = ("difference", "malformed")


def shrink_pinned(engine, folder: Path, workload, failure: Failure, received: Received) -> tuple[Failure, tuple, Received]:
    """A failing pinned workload made small: drop each subscription, then
    each event, while the engine still fails the same way (keeping one line
    in each file). One engine run per line tried."""
    subscriptions, events, forms = (list(part) for part in workload)
    for k in reversed(range(len(subscriptions))):
        if len(subscriptions) > 1:
            trial = (subscriptions[:k] + subscriptions[k + 1:], events, forms[:k] + forms[k + 1:])
            found, got = check_workload(engine, folder, *trial)
            if found is not None and found.kind == failure.kind:
                (subscriptions, events, forms), failure, received = trial, found, got
    for k in reversed(range(len(events))):
        if len(events) > 1:
            trial = (subscriptions, events[:k] + events[k + 1:], forms)
            found, got = check_workload(engine, folder, *trial)
            if found is not None and found.kind == failure.kind:
                (subscriptions, events, forms), failure, received = trial, found, got
    return failure, (subscriptions, events, forms), received


def save_case(out_dir: Path, engine: dict, workload, received: Received, failure: Failure, seed: int) -> Path:
    """The replay directory of a failure: the two inputs, the model's lines,
    the engine's output and standard error, and case.json."""
    subscriptions, events, forms = workload
    with tempfile.TemporaryDirectory() as scratch:
        write_workload(Path(scratch), subscriptions, events, forms)
        files = {name: (Path(scratch) / name).read_bytes() for name in ("subscriptions.jsonl", "events.jsonl")}
        files["expected.jsonl"] = b"".join(line + b"\n" for line in expected_lines(model_results(Path(scratch))))
    files["received.jsonl"], files["stderr.txt"] = received.stdout, received.stderr
    return save_matching(out_dir, files, engine, seed, {"kind": failure.kind, "message": failure.message})
