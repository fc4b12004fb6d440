import json
import os
from pathlib import Path
from typing import Callable, NamedTuple

import pytest
from hypothesis import Phase, settings

from subsum.conformance.runner import profiles

# The `ci` profile is the default under pytest; HYPOTHESIS_PROFILE=thorough selects the other.
profiles.load(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


class QuickRun(NamedTuple):
    """One benchmark run with `quick=True`: its folder, its result, and the lines it logged."""

    out: Path
    result: dict
    messages: list[str]

    def written(self, names) -> dict:
        """Check that each file of `names` was written and is not empty; summary.json as read back."""
        for name in names:
            assert (self.out / name).stat().st_size > 0, name
        return json.loads((self.out / "summary.json").read_text())


@pytest.fixture(scope="module")
def quick_bench(tmp_path_factory):
    """A function running a benchmark's `run(out, quick=True, log=...)` into a fresh folder named after it."""

    def run_quick(name: str, run: Callable[..., dict]) -> QuickRun:
        out = tmp_path_factory.mktemp(name)
        messages: list[str] = []
        return QuickRun(out, run(out, quick=True, log=messages.append), messages)

    return run_quick


@pytest.fixture
def first_failure():
    """For a test that plants a bug only to show that a check bites: the
    active profile's settings, but Hypothesis stops at the first failing
    example instead of shrinking it. Catching the bug is what such a test
    asserts; shrinking costs 5 to 10 s a test there. Tests that assert what a
    failure shrinks to, or replay it, keep shrinking."""
    settings.register_profile("first-failure", settings.default, phases=(Phase.explicit, Phase.reuse, Phase.generate))
    settings.load_profile("first-failure")
    yield
    profiles.load(profiles.active().name)


#: The longest tests (a minute or more each), started first: under pytest-xdist a long test
#: picked up last would run alone at the end while the other workers idle.
RUN_FIRST = tuple(f"tests/test_hostile.py::test_every_hostile_case_gets_a_clear_error_and_no_output[{shard}]"
                  for shard in ("spark", "no-jvm-0", "no-jvm-1"))


def pytest_collection_modifyitems(items):
    first = {nodeid: k for k, nodeid in enumerate(RUN_FIRST)}
    items.sort(key=lambda item: first.get(item.nodeid, len(first)))  # stable: the rest keep their order
