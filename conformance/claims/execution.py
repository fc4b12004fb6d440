"""Running the registry's checks: `execute` runs one under the active profile
(its time limit, its census and coverage floors), `run_check` reports it as a
`CheckResult` without raising; `claim_by_id` and `plugin_claims` pick the
claims `subsum verify` runs (all, some by ID, or those that hold of one
plug-in alone)."""

from __future__ import annotations

import time
import traceback
from typing import Mapping

import attrs
from hypothesis.reporting import with_reporter

from subsum.conformance.runner import budget
from subsum.conformance.runner import census
from subsum.conformance.runner import profiles
from subsum.conformance.runner import violations
from subsum.conformance.claims.caching import PLUGIN_CACHE_MACHINE
from subsum.conformance.claims.matching import BUILT_IN_ONLY
from subsum.conformance.claims.records import Check, Claim
from subsum.conformance.claims.registry import CLAIMS

#: `subsum verify --engine X` and `--cache X` (spec/11-plugins.md DEF-PLUG-2): the claims whose
#: checks can run against one plug-in alone (conformance/runner/under_test.py), with those checks. Left
#: out: checks of one built-in engine's internals (CLM-ENG-6, 7, BUILT_IN_ONLY) and the work
#: counters (CLM-ENG-8: `MatchStats` is the built-in engines' bookkeeping), and the reference
#: policies' own invariants (CLM-CACHE-2).
PLUGIN_CLAIMS: dict[str, tuple[str, ...]] = {
    "engine": ("CLM-DATA-2", "CLM-ENG-1", "CLM-ENG-2", "CLM-ENG-3", "CLM-ENG-4", "CLM-ENG-5"),
    "cache": ("CLM-CACHE-1",),
}


def plugin_claims(subject: str) -> list[Claim]:
    """The claims `subsum verify --<subject> X` runs, each with the checks that run against X."""
    def checks_of(claim: Claim) -> tuple[Check, ...]:
        if subject == "cache":
            return (PLUGIN_CACHE_MACHINE,)
        return tuple(c for c in claim.checks if all(c is not own for own in BUILT_IN_ONLY))

    return [attrs.evolve(claim, checks=checks_of(claim)) for claim in map(claim_by_id, PLUGIN_CLAIMS[subject])]


STATUSES = ("pass", "fail", "timeout")


@attrs.frozen
class CheckResult:
    claim: str
    kind: str
    check: str
    status: str  # one of STATUSES
    seconds: float
    detail: str
    #: The claim a failure speaks for, when it names one (a ClaimViolation); else the check's own claim.
    violated: str | None = None

    def to_json(self) -> dict:
        return attrs.asdict(self)


def claim_by_id(claim_id: str) -> Claim:
    for claim in CLAIMS:
        if claim.id == claim_id:
            return claim
    raise KeyError(claim_id)


def missing_floors(floors: Mapping[str, int], seen: Mapping[str, int]) -> dict[str, tuple[int, int]]:
    """The census tags drawn fewer times than their floor: tag -> (drawn, floor)."""
    return {tag: (seen.get(tag, 0), floor) for tag, floor in sorted(floors.items()) if seen.get(tag, 0) < floor}


def execute(check: Check, budget_scale: float = 1.0) -> str:
    """Run a check under the active profile (conformance/runner/profiles.py): within
    its time limit, with its census counted and its floors enforced. Returns
    the check's detail line; raises on failure, `CheckTimeout` when cut."""
    profile = profiles.active()
    seconds = check.budget * budget_scale
    deadline = time.perf_counter() + seconds * profile.spend
    rounds = 0
    budget.last_failure.clear()
    reported: list[object] = []  # what Hypothesis would print on standard output, which is the report's (--format json)
    with (census.observe() as seen, budget.time_limit(seconds * profile.limit, profile.shrink_grace) as limit,
          with_reporter(reported.append)):
        try:
            while True:
                outcome = check.run()
                rounds += 1
                if check.kind in ("example", "proof", "exhaustive") or time.perf_counter() >= deadline:
                    break
        except BaseException as exc:
            if limit.fired:  # the deadline passed, however the check then ended (Hypothesis may wrap the timeout)
                raise budget.CheckTimeout(seconds * profile.limit) from None
            if isinstance(exc, Exception) and any(SLOW_SHRINK in str(text) for text in reported):
                exc.add_note(f"(shrinking stopped at the {profile.name} profile's bound of {profile.shrink_seconds:g} s: "
                             "the counterexample above is shrunk that far)")
            raise
    if limit.fired:
        raise budget.CheckTimeout(seconds * profile.limit)
    if profile.name == "ci":  # floors are counts of the ci profile's fixed draws
        short = missing_floors(check.floors, seen)
        if short:
            raise AssertionError("coverage floor not met (the generators no longer draw these cases): "
                                 + ", ".join(f"{tag} drawn {got} times, floor {floor}" for tag, (got, floor) in short.items()))
    detail = outcome if isinstance(outcome, str) else ""
    return detail + (f"{'; ' if detail else ''}{rounds} rounds" if rounds > 1 else "")


#: The start of Hypothesis's warning when shrinking reaches MAX_SHRINKING_SECONDS (conformance/runner/profiles.py sets it).
SLOW_SHRINK = "WARNING: Hypothesis has spent more than"


def describe(exc: BaseException) -> str:
    """A failure as the report shows it: its type, message and notes (Hypothesis's
    counterexample and @reproduce_failure blob); for distinct failures found
    together (an exception group), each of them."""
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()  # with its __notes__ (Python 3.11+)
    if isinstance(exc, BaseExceptionGroup):
        parts = [f"[{k}] " + describe(sub) for k, sub in enumerate(exc.exceptions, 1)]
        text = "\n\n".join([text, *parts])
    return text


def run_check(claim: Claim, check: Check, budget_scale: float = 1.0) -> CheckResult:
    """Run one check and report it, never raising for a failure or a timeout."""
    start = time.perf_counter()
    violated = None
    try:
        status, detail = "pass", execute(check, budget_scale)
    except budget.CheckTimeout as exc:
        status = "timeout"
        violated = budget.last_failure.claim
        detail = f"cut after {time.perf_counter() - start:.1f} s: {exc}"
        if budget.last_failure.text:
            detail += f"\nlast failing example: {budget.last_failure.text}"
    except Exception as exc:  # a failing check, reported, never swallowed
        status = "fail"
        violated = violations.claim_of(exc) or claim.id
        detail = describe(exc)
    return CheckResult(claim.id, check.kind, check.name, status, round(time.perf_counter() - start, 3), detail, violated)
