"""Hypothesis settings profiles, `ci` (the default) and `thorough`, and the
time budget each one gives a check.

- `ci` is derandomized: the same examples every run, so CI is never flaky
  and a failure replays exactly. Each check runs once, under its budget
  (`Check.budget`, seconds); past it, the check is cut and reported as
  `timeout`.
- `thorough` draws fresh random examples and *spends* its budget: it runs a
  property or state machine again and again, each round with new random
  examples, until `budget × spend` seconds have passed, then stops at the
  end of that round. A round that runs past `budget × (spend + 1)` is cut
  as `timeout`. Failures are shrunk and saved in Hypothesis's example
  database (`.hypothesis/`), which later runs replay first.

`--budget-scale F` (subsum verify) multiplies every check's budget.

Under `ci`, a check's examples depend only on its name, its strategies and
the code they run, never on what else the process has loaded:
- each check is seeded by its name (`pinned`), not by Hypothesis's default
  for derandomized runs, a digest of the test's source text (editing a
  comment inside a state machine drew other examples);
- Hypothesis's pool of "local constants" (every literal of every project
  module loaded so far, drawn now and then in place of a generated value)
  is replaced by a fixed pool, `BOUNDARY_CONSTANTS`: the boundaries the
  spec names. Hypothesis's pool grew with whatever checks had run before in
  the same process, so one check drew different examples depending on the
  order `subsum verify` dispatched the others (measured: the Strawman
  differential drew 1,066 first subscriptions alone, 698 after any engine
  check), and mutmut's rewritten modules changed it again in `make mutate`,
  where the census floors then failed on the clean run. `thorough` keeps
  Hypothesis's own pool.

Shrinking is bounded: Hypothesis stops shrinking a failure after the
profile's `shrink_seconds` (its `MAX_SHRINKING_SECONDS`, which Hypothesis
documents as the knob to change) and reports the example it has, shrunk
that far. A check whose budget passes while it shrinks gets `shrink_grace`
more (`budget.time_limit`'s grace: twice the shrink bound, for the runs
Hypothesis makes of the final example to report it), so a failing
check reports, as a failure with its counterexample, within its budget plus
that grace.
"""

from __future__ import annotations

import hashlib
from typing import Any

import attrs
from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.internal.conjecture import engine as _conjecture_engine
from hypothesis.internal.conjecture import providers as _providers
from hypothesis.internal.floats import float_to_int
from sortedcontainers import SortedSet  # type: ignore[import-untyped]

_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
#: Every phase but `explain`: it re-runs a failure under a tracer after shrinking has stopped, for a time
#: nothing bounds (seconds per example run), and a gate must report within its budget and grace.
_PHASES = tuple(p for p in Phase if p is not Phase.explain)

#: Both profiles derive from Hypothesis's `default` profile, never from whatever profile is active at import: where
#: the environment variable CI is set (as on CI machines), Hypothesis loads its own built-in `ci` profile
#: (derandomized, no database) at import, and a profile registered without a parent inherits it, so `thorough`
#: came out derandomized on CI only. tests/test_profiles.py checks both profiles with CI set and unset.
_HYPOTHESIS_DEFAULT = settings.get_profile("default")

settings.register_profile(
    "ci",
    parent=_HYPOTHESIS_DEFAULT,
    max_examples=60,
    derandomize=True,
    deadline=None,
    print_blob=True,
    database=None,
    suppress_health_check=_SUPPRESSED,
    phases=_PHASES,
)
settings.register_profile(
    "thorough",
    parent=_HYPOTHESIS_DEFAULT,
    max_examples=200,  # per round; rounds repeat until the budget is spent
    deadline=None,
    print_blob=True,
    suppress_health_check=_SUPPRESSED,
    phases=_PHASES,
)


@attrs.frozen
class Profile:
    name: str
    #: Keep drawing fresh rounds until budget × spend seconds have passed (0: run once).
    spend: float
    #: The hard limit of a check, in budgets: past budget × limit it is cut as `timeout`.
    limit: float
    #: The shrink bound: Hypothesis shrinks one failure for at most this long (its default is 300 s).
    shrink_seconds: float = 20.0

    @property
    def shrink_grace(self) -> float:
        """How long past its budget a check that has found a failure may run: twice the shrink bound."""
        return 2 * self.shrink_seconds


PROFILES: dict[str, Profile] = {
    "ci": Profile("ci", spend=0.0, limit=1.0, shrink_seconds=20.0),
    # about 100 property and state-machine checks at 120 s: some 1.7 hours of fresh examples a run
    "thorough": Profile("thorough", spend=0.5, limit=1.5, shrink_seconds=60.0),
}

_active = PROFILES["ci"]


_HYPOTHESIS_LOCAL_CONSTANTS = _providers._get_local_constants


_INT64 = 2**63
#: The pool a derandomized profile draws its "local constants" from, whatever modules are loaded: small
#: counts, the int64 ends (DEF-DATA-1), signed zeros, the largest and smallest floats, short strings.
BOUNDARY_CONSTANTS = _providers.Constants(
    integers=SortedSet([*range(-3, 17), 100, 1000, -_INT64, 1 - _INT64, _INT64 - 2, _INT64 - 1]),
    floats=SortedSet([0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1.5, 2.0, 5e-324, -5e-324, 1.7976931348623157e308, -1.7976931348623157e308],
                     key=float_to_int),
    bytes=SortedSet(),
    strings=SortedSet(["", "a", "b", "ab", "abc", "A", "x", "s"]),
)


def _no_local_constants() -> _providers.Constants:
    """The local-constant pool of a derandomized profile: `BOUNDARY_CONSTANTS`, whatever modules are loaded."""
    return BOUNDARY_CONSTANTS


def load(profile: str) -> None:
    """Make `profile` the active one: its Hypothesis settings and its budgets."""
    global _active
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")
    settings.load_profile(profile)
    _active = PROFILES[profile]
    _conjecture_engine.MAX_SHRINKING_SECONDS = int(_active.shrink_seconds)
    # Hypothesis 6.170's hook (hypothesis/internal/conjecture/providers.py); tests/test_profiles.py fails if it stops working.
    derandomized = settings.default is not None and settings.default.derandomize
    _providers._get_local_constants = _no_local_constants if derandomized else _HYPOTHESIS_LOCAL_CONSTANTS
    _providers.CONSTANTS_CACHE.cache.clear()


def active() -> Profile:
    return _active


#: Where issue 57 moved each module of checks -> its name before: a check is seeded by the name it had when
#: its floors and expected draws were set, so that moving a file does not change what `ci` draws.
SEEDED_AS = {
    "subsum.conformance.runner.verify": "subsum.conformance.verify",
    "subsum.conformance.runner.pool": "subsum.conformance.verify_workers",
    "subsum.conformance.runner.worker": "subsum.conformance.verify_worker",
    "subsum.conformance.runner.budget": "subsum.conformance.budget",
    "subsum.conformance.runner.profiles": "subsum.conformance.profiles",
    "subsum.conformance.runner.reports": "subsum.conformance.reports",
    "subsum.conformance.runner.census": "subsum.conformance.census",
    "subsum.conformance.runner.violations": "subsum.conformance.violations",
    "subsum.conformance.runner.under_test": "subsum.conformance.under_test",
    "subsum.conformance.checks.matching.properties": "subsum.conformance.properties",
    "subsum.conformance.checks.matching.examples": "subsum.conformance.examples",
    "subsum.conformance.checks.matching.proofs": "subsum.conformance.proofs",
    "subsum.conformance.checks.matching.engines": "subsum.conformance.engines",
    "subsum.conformance.checks.matching.engine_internals": "subsum.conformance.engine_internals",
    "subsum.conformance.checks.network.forwarding": "subsum.conformance.network",
    "subsum.conformance.checks.network.checked_brokers": "subsum.conformance.checked_brokers",
    "subsum.conformance.checks.network.reconfig": "subsum.conformance.reconfig",
    "subsum.conformance.checks.network.reconfig_scenarios": "subsum.conformance.reconfig_scenarios",
    "subsum.conformance.checks.routing.routes": "subsum.conformance.routing",
    "subsum.conformance.checks.routing.churn": "subsum.conformance.routing_machine",
    "subsum.conformance.checks.routing.siena": "subsum.conformance.siena",
    "subsum.conformance.checks.caching.policies": "subsum.conformance.caching",
    "subsum.conformance.checks.caching.in_protocol": "subsum.conformance.protocol_caches",
    "subsum.conformance.checks.caching.request_response": "subsum.conformance.requests",
    "subsum.conformance.checks.caching.client_server": "subsum.conformance.client_server",
    "subsum.conformance.checks.pipeline.spark": "subsum.conformance.spark",
    "subsum.conformance.checks.pipeline.readers": "subsum.conformance.spark_readers",
    "subsum.conformance.checks.pipeline.traces": "subsum.conformance.spark_traces",
    "subsum.conformance.checks.pipeline.trace_boundaries": "subsum.conformance.trace_boundaries",
    "subsum.conformance.checks.pipeline.native_json": "subsum.conformance.native_json",
    "subsum.conformance.schedules.runs": "subsum.conformance.schedules",
    "subsum.conformance.schedules.families": "subsum.conformance.families",
    "subsum.conformance.schedules.fuzz": "subsum.conformance.fuzz",
    "subsum.conformance.schedules.fuzz_cluster": "subsum.conformance.fuzz_cluster",
    "subsum.conformance.schedules.shrinking": "subsum.conformance.shrinking",
    "subsum.conformance.schedules.declared": "subsum.conformance.declared",
    "subsum.conformance.checks.summaries": "subsum.conformance.summaries",
}


def seed_name(module: str) -> str:
    """The module name a check of `module` is seeded by: its name before issue 57's move (`SEEDED_AS`), else its own.

    >>> seed_name("subsum.conformance.checks.summaries.churn"), seed_name("subsum.conformance.kit.vectors")
    ('subsum.conformance.summaries.churn', 'subsum.conformance.kit.vectors')
    """
    for new, old in SEEDED_AS.items():
        if module == new or module.startswith(new + "."):
            return old + module[len(new):]
    return module


def pinned(test: Any, name: str | None = None) -> Any:
    """Under a derandomized profile (`ci`), `test` seeded by its name (its module and qualified name unless
    `name` is given): the examples depend on the strategies and the code they run, not on the test's source
    text. Under the others (`thorough`), `test` unchanged: fresh random examples. A state machine class is
    subclassed rather than changed; a `@given` test gets Hypothesis's `seed` (it must be the outer wrapper).

    >>> from hypothesis import given, strategies as st
    >>> load("ci")
    >>> drawn = []
    >>> def draws(x): drawn.append(x)
    >>> pinned(settings(max_examples=3, database=None)(given(st.integers())(draws)))()
    >>> first, drawn[:] = list(drawn), []
    >>> def draws(x): drawn.append(x)  # the same name, other source text (this comment): the same draws
    >>> pinned(settings(max_examples=3, database=None)(given(st.integers())(draws)))()
    >>> drawn == first
    True
    """
    if settings.default is None or not settings.default.derandomize:
        return test
    name = name or f"{seed_name(test.__module__)}.{test.__qualname__}"
    value = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")
    if isinstance(test, type):
        return seed(value)(type(test.__name__, (test,), {"__qualname__": test.__qualname__, "__module__": test.__module__}))
    return seed(value)(test)
