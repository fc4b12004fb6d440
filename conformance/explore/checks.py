"""The exhaustive checks of spec/12 (CLM-EXP-1 … 7): one scope a protocol,
searched completely; a larger one under the `thorough` profile. A
violation fails the check with the claim it breaks and its replay (in
`fuzz-replays/`); a search a bound cut fails it too, since a claim about a
whole scope holds only when all of it was searched."""

from __future__ import annotations

from typing import Callable

from subsum.conformance.runner import profiles
from subsum.conformance.explore.scope import Scope
from subsum.conformance.explore.search import explore
from subsum.conformance.explore.searches import MAX_STATES
from subsum.conformance.replays import documents

#: The scope each claim checks under `ci` (each completes in well under its budget) and under `thorough`.
CI_SCOPES = {
    "strawman": Scope("strawman", 3, 2, events=1, swaps=1),
    "timed": Scope("timed", 3, 2, swaps=1),
    "notified": Scope("notified", 3, 1, events=1, swaps=1),
    "informed": Scope("informed", 3, 1, swaps=1),
    "siena": Scope("siena", 2, 3, events=1),
    "summaries": Scope("summaries", 3, 1, events=1),
    "caching": Scope("caching", 3, 2, events=1, requests=1),
}
THOROUGH_SCOPES = {
    "strawman": Scope("strawman", 3, 2, events=2, swaps=1),
    "timed": Scope("timed", 3, 2, events=1, swaps=1),
    "notified": Scope("notified", 3, 2, swaps=1),
    "informed": Scope("informed", 3, 1, events=1, swaps=1),
    "siena": Scope("siena", 3, 4),
    "summaries": Scope("summaries", 3, 2, events=1),
    "caching": Scope("caching", 3, 2, events=2, requests=2),
}


def scope_for(protocol: str) -> Scope:
    """The scope of `protocol`'s claim under the active profile."""
    return (THOROUGH_SCOPES if profiles.active().name == "thorough" else CI_SCOPES)[protocol]


def search_completely(scope: Scope) -> str:
    """Search `scope`; fail on a violation (naming its claim and replay) or on a search a bound cut."""
    result = explore(scope, max_states=MAX_STATES, budget=float("inf"), out_dir=documents.FUZZ_FOLDER)
    asked = f", {scope.requests} requests" if scope.requests else ""
    shape = (f"{scope.protocol}, {scope.brokers} brokers, {scope.subscriptions} subscriptions, {scope.events} events, "
             f"{scope.swaps} swaps{asked}: {result.states:,} states, {result.transitions:,} moves, depth {result.depth}")
    for found in result.found:
        raise AssertionError(f"{found.violation.claim} violated at {found.violation.where(len(found.schedule))} "
                             f"({found.moves} moves; {shape}): {found.violation.message}; "
                             f"replay: subsum replay {found.replay}")
    assert result.complete, f"the search was cut by --{result.cut_by} ({shape}): the scope was not searched completely"
    return shape + ", complete"


def _check(protocol: str) -> Callable[[], str]:
    def run() -> str:
        return search_completely(scope_for(protocol))

    run.__name__ = run.__qualname__ = f"every_{protocol}_interleaving"
    run.__doc__ = f"Every interleaving of {protocol}'s scope (CI_SCOPES, THOROUGH_SCOPES) passes every check."
    return run


every_strawman_interleaving = _check("strawman")
every_timed_interleaving = _check("timed")
every_notified_interleaving = _check("notified")
every_informed_interleaving = _check("informed")
every_siena_interleaving = _check("siena")
every_summaries_interleaving = _check("summaries")
every_caching_interleaving = _check("caching")
