"""Hypothesis settings profiles: `ci` (the default) and `thorough`.

`ci` is derandomized: the same examples every run, so a CI failure replays
exactly. `thorough` draws fresh random examples and many more of them; when
it finds a failure, Hypothesis prints the shrunk example and a
`@reproduce_failure` blob that replays it.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

PROFILES = ("ci", "thorough")

settings.register_profile(
    "ci",
    max_examples=60,
    derandomize=True,
    deadline=None,
    print_blob=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=1000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


def load(profile: str) -> None:
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")
    settings.load_profile(profile)
