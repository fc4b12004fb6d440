"""Running the claims' checks (`subsum verify`): which claims, each check
under its time budget and a watchdog, and the reports of the run.

A check that runs past its budget is cut and reported as `timeout` with
the last failing example seen; one that ignores its alarm (stuck in C
code) for `WATCHDOG_GRACE` seconds more ends the run, after the reports of
what ran are written.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Callable, ContextManager

import attrs

from subsum.conformance import claims as registry
from subsum.conformance.runner import profiles
from subsum.conformance.runner import reports
from subsum.conformance.runner import under_test
from subsum.conformance.runner import pool as verify_workers
from subsum.conformance.runner.budget import Watchdog
from subsum.conformance.claims import PLUGIN_CLAIMS, Check, CheckResult, Claim, plugin_claims, run_check
from subsum.core.errors import SubsumError
from subsum.core.outputs import write_lines_atomically
from subsum.impl.caching import cache_class
from subsum.impl.matching import engine_class

#: How long a check may ignore its alarm (stuck in C code) before the watchdog ends the run.
WATCHDOG_GRACE = 30.0


@attrs.frozen
class Selection:
    """The claims a run checks, and the component it checks them against
    (`subject` "engine" or "cache" and its `name`), or every built-in one."""

    claims: list[Claim]
    subject: str | None = None
    name: str | None = None

    def context(self) -> ContextManager[None]:
        """The frame in which the checks run against the chosen component alone."""
        if self.subject is None or self.name is None:
            return contextlib.nullcontext()
        return under_test.only(self.subject, self.name)


def select(claim_ids: tuple[str, ...] = (), engine: str | None = None, cache: str | None = None) -> Selection:
    """Every claim, the ones named, or those that hold of one engine or cache
    (spec/11-plugins.md DEF-PLUG-2); a plug-in that cannot be loaded is bad
    input (exit 2), found before any check runs."""
    if engine and cache:
        raise SubsumError("--engine and --cache: check one component at a time")
    if not engine and not cache:
        try:
            return Selection([registry.claim_by_id(c) for c in claim_ids] if claim_ids else list(registry.CLAIMS))
        except KeyError as exc:
            raise SubsumError(f"unknown claim {exc.args[0]!r}; `subsum claims` lists them") from None
    subject, name = ("engine", engine) if engine else ("cache", cache)
    assert name is not None
    (engine_class if subject == "engine" else cache_class)(name)
    unknown = sorted(set(claim_ids) - set(PLUGIN_CLAIMS[subject]))
    if unknown:
        raise SubsumError(f"--{subject} runs the claims {', '.join(PLUGIN_CLAIMS[subject])}; not {', '.join(unknown)}")
    return Selection([c for c in plugin_claims(subject) if not claim_ids or c.id in claim_ids], subject, name)


def shared_result(result: CheckResult, claim: Claim, ran_for: Claim) -> CheckResult:
    """`result`, run for `ran_for`'s check, reported for `claim` too: it says whose run it is and takes no time."""
    if claim.id == ran_for.id:
        return result
    note = f"the run of {ran_for.id}'s check"
    return attrs.evolve(result, claim=claim.id, seconds=0.0, detail=f"{result.detail}; {note}" if result.detail else note,
                        violated=claim.id if result.violated == ran_for.id else result.violated)


@attrs.define
class Run:
    """A run of the checks: its settings, its results so far, and its reports."""

    selection: Selection
    profile: str
    budget_scale: float = 1.0
    #: Worker processes (conformance/runner/pool.py); 1 runs every check in this process.
    jobs: int = 1
    #: `select`'s arguments, which a worker process needs to make the same selection.
    selected_by: dict = attrs.Factory(dict)
    results: list[CheckResult] = attrs.Factory(list)
    started: float = attrs.Factory(time.perf_counter)

    @property
    def checks(self) -> int:
        """The checks to run: a check that several claims list runs once (`verify_workers.shared_runs`)."""
        return len(verify_workers.runs(self.selection.claims))

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def check_all(self, progress: Callable[[int, Claim, Check], None], stuck: Callable[[Claim, Check, float], None]) -> list[CheckResult]:
        """Run every check of the selection, in order; `progress(i, claim, check)`
        before each, `stuck(claim, check, budget)` if one ends the run. A check
        that several claims list (the same function, kind, budget and floors)
        runs once, and its result stands for each of them (`verify_workers.shared_runs`)."""
        units = verify_workers.units(self.selection.claims)
        first = verify_workers.shared_runs(units)
        distinct = verify_workers.runs(self.selection.claims)
        jobs = min(self.jobs, len(distinct))
        if jobs > 1:
            def stuck_after(done: list[CheckResult], claim: Claim, check: Check, hard: float) -> None:
                self.results = done
                stuck(claim, check, hard)

            settings = {"claims": [], "engine": None, "cache": None, **self.selected_by, "profile": self.profile,
                        "budget_scale": self.budget_scale}
            ran = verify_workers.run_parallel(settings, distinct, jobs, progress, stuck_after)
        else:
            ran = self._serially(distinct, progress, stuck)
        by_first = dict(zip(sorted(set(first)), ran))  # a run a stuck check ended holds fewer results than runs
        self.results = [shared_result(by_first[first[i]], claim, units[first[i]][0])
                        for i, (claim, _) in enumerate(units) if first[i] in by_first]
        return self.results

    def _serially(self, work: list[tuple[Claim, Check]], progress: Callable[[int, Claim, Check], None],
                  stuck: Callable[[Claim, Check, float], None]) -> list[CheckResult]:
        limit = profiles.active().limit
        with self.selection.context():
            for claim, check in work:
                progress(len(self.results) + 1, claim, check)
                hard = check.budget * self.budget_scale * limit
                began = time.perf_counter()

                def expired(claim: Claim = claim, check: Check = check, hard: float = hard, began: float = began) -> None:
                    self.results.append(CheckResult(claim.id, check.kind, check.name, "timeout", round(time.perf_counter() - began, 3),
                                                    f"did not stop {WATCHDOG_GRACE:g} s after its budget of {hard:g} s; the run was ended"))
                    stuck(claim, check, hard)

                with Watchdog(hard + profiles.active().shrink_grace, WATCHDOG_GRACE, expired):
                    self.results.append(run_check(claim, check, self.budget_scale))
        return self.results

    def failed(self) -> list[CheckResult]:
        return [r for r in self.results if r.status != "pass"]

    def report(self) -> dict:
        """The run as JSON (`subsum verify --format json`)."""
        failed = self.failed()
        timeouts = sum(r.status == "timeout" for r in failed)
        return {"profile": self.profile, "claims": len(self.selection.claims), "checks": len(self.results),
                "passed": len(self.results) - len(failed), "failed": len(failed) - timeouts, "timed_out": timeouts,
                "seconds": round(self.elapsed, 3), "results": [r.to_json() for r in self.results]}

    def write_reports(self, json_path: str | None, junit_path: str | None, html_path: str | None) -> None:
        """The files of the run, each written atomically: JSON, JUnit XML, a self-contained HTML page."""
        if json_path:
            doc = {"profile": self.profile, "results": [r.to_json() for r in self.results]}
            write_lines_atomically(json_path, [json.dumps(doc, indent=2, ensure_ascii=False)])
        if junit_path:
            write_text(junit_path, reports.junit_xml(self.results, self.profile, self.elapsed))
        if html_path:
            write_text(html_path, reports.html_page(self.results, self.selection.claims, self.profile, self.elapsed, Path(html_path).parent))


def write_text(path: str, text: str) -> None:
    """Write a report atomically; a lone surrogate in a counterexample is written escaped."""
    write_lines_atomically(path, [text.encode("utf-8", "backslashreplace").decode("utf-8").rstrip("\n")])
