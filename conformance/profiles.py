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

import attrs
from hypothesis import HealthCheck, Phase, settings
from hypothesis.internal.conjecture import engine as _conjecture_engine

_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
#: Every phase but `explain`: it re-runs a failure under a tracer after shrinking has stopped, for a time
#: nothing bounds (seconds per example run), and a gate must report within its budget and grace.
_PHASES = tuple(p for p in Phase if p is not Phase.explain)

settings.register_profile(
    "ci",
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


def load(profile: str) -> None:
    """Make `profile` the active one: its Hypothesis settings and its budgets."""
    global _active
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")
    settings.load_profile(profile)
    _active = PROFILES[profile]
    _conjecture_engine.MAX_SHRINKING_SECONDS = int(_active.shrink_seconds)


def active() -> Profile:
    return _active
