"""benchmarks/network_versions.py: the figures it reads from a `bench network`
summary and the verdicts its stated rule gives, on planted runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "network_versions.py"
spec = importlib.util.spec_from_file_location("network_versions", PATH)
versions = importlib.util.module_from_spec(spec)
spec.loader.exec_module(versions)

BURST, PACED, SIX, TWENTY = versions.FIGURES


def test_the_figures_are_read_from_a_bench_summary():
    summary = {"throughput": {"heapq_baseline_per_s": 2_000_000, "burst": {"event_msgs_per_s": 300_000},
                              "paced": {"event_msgs_per_s": 200_000}},
               "fuzz": [{"name": "fuzz, 6 brokers", "schedules_per_min": 9_000},
                        {"name": "fuzz, 20 brokers", "schedules_per_min": 2_400}]}
    assert versions.figures(summary) == {BURST: 0.15, PACED: 0.1, SIX: 9_000, TWENTY: 2_400}


def runs(figure, old, new):
    return ([{"version": "old", "seed": k, "figure": figure, "value": v} for k, v in enumerate(old)]
            + [{"version": "new", "seed": k, "figure": figure, "value": v} for k, v in enumerate(new)])


@pytest.mark.parametrize("new, verdict", [
    ([10_500, 10_600, 10_700], "met with confidence"),  # mean 10,600, interval well above 10,000
    ([9_000, 10_500, 12_000], "met"),  # mean 10,500 reaches it; the interval's lower end does not
    ([9_800, 9_900, 9_950], "not met"),
])
def test_each_verdict_follows_the_stated_rule(new, verdict):
    rows = runs(BURST, [0.08, 0.08, 0.09], [0.2, 0.2, 0.2]) + runs(SIX, [4_000, 4_100, 3_900], new) \
        + runs(TWENTY, [900, 950, 1_000], [2_600, 2_700, 2_800])
    got = versions.summarise(rows)
    assert got[SIX]["verdict"] == verdict
    assert got[SIX]["ratio_new_to_old"] == round(sum(new) / 3 / 4_000, 3)
    assert got[BURST]["verdict"] == "met with confidence" and got[TWENTY]["target"] == 2_500


@pytest.mark.parametrize("new, verdict", [
    ([0.15, 0.15, 0.16], "met with confidence"),  # ratios 1.875, 1.875, 1.778 to the old 0.08, 0.08, 0.09
    ([0.10, 0.12, 0.17], "met"),  # ratios 1.25, 1.5, 1.889: mean 1.546, interval reaching below 1.5
    ([0.11, 0.12, 0.12], "not met"),
])
def test_the_ratio_target_reads_the_runs_seed_by_seed(new, verdict):
    """Issue 52's burst target: 1.5 times the old share, by the new/old ratio of each seed's pair of runs."""
    got = versions.summarise(runs(BURST, [0.08, 0.08, 0.09], new))
    assert got[BURST]["ratio_target"] == 1.5 and got[BURST]["ratio_verdict"] == verdict
    assert got[BURST]["paired_ratio"] == round(sum(n / o for n, o in zip(new, [0.08, 0.08, 0.09])) / 3, 3)


def test_a_ratio_target_of_one_must_be_exceeded():
    """Paced handling "improves": a ratio of exactly 1 is not met."""
    same = versions.summarise(runs(PACED, [0.05, 0.06, 0.07], [0.05, 0.06, 0.07]))
    better = versions.summarise(runs(PACED, [0.05, 0.06, 0.07], [0.06, 0.07, 0.08]))
    assert same[PACED]["ratio_verdict"] == "not met" and better[PACED]["ratio_verdict"] == "met with confidence"


def test_a_violation_is_told_apart_from_a_failed_run():
    """Exit 1 only when the bench's own report lists a violation; a run that failed otherwise is exit 3."""
    found = '{"fuzz": [{"name": "fuzz, 6 brokers", "schedules_per_min": 1, "violations": 2}]}'
    clean = '{"fuzz": [{"name": "fuzz, 6 brokers", "schedules_per_min": 1, "violations": 0}]}'
    assert versions._found_violations(found)
    assert not versions._found_violations(clean)
    assert not versions._found_violations("Traceback (most recent call last): ...")
