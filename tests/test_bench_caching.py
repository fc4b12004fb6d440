"""The caching benchmark (subsum/bench/caching/bench.py): its outputs, and the
relations its numbers must keep whatever the timings. Nothing here asserts
a timing."""

import csv

import pytest

from subsum.bench.caching import ops as cache_ops
from subsum.bench.caching import bench as bc
from subsum.impl.network.workloads.caching import run_caching

FILES = ("caching.csv", "cache_ops.csv", "tradeoff.png", "policies.png", "cache_ops.png", "summary.json")


@pytest.fixture(scope="module")
def quick(quick_bench):
    return quick_bench("caching", bc.run)


def test_quick_run_writes_every_file_and_no_disagreement(quick):
    _, result, messages = quick
    saved = quick.written(FILES)
    assert result["disagreements"] == []
    assert saved["hypothesis_holds"] and saved["unbounded_hypothesis_holds"]
    assert len(saved["points"]) == 1 and len(saved["unbounded_points"]) == 1
    assert any(m.startswith("[1/") for m in messages)  # progress lines
    assert bc.markdown_table(saved).count("| 5% |") == 1


def test_unbounded_all_recovers_everything_and_caches_nest(quick):
    """With unbounded caches every broker holds every publication under
    `all`, so every matching past publication is recovered at the
    requester's own broker; and all ≥ candidate ≥ leaf ≥ single holds there."""
    out, result, _ = quick
    point = result["unbounded_points"][0]
    assert point["survivability"]["all"] == 1.0 and point["delay_mean_hops"]["all"] == 0.0
    s = point["survivability"]
    assert s["all"] >= s["candidate"] >= s["leaf"] >= s["single"] > 0


def test_bench_rows_are_the_simulations(quick):
    """A bench row is the report of `run_caching` on the same settings (what
    `subsum simulate caching` prints)."""
    out, _, _ = quick
    with open(out / "caching.csv", newline="") as fh:
        row = next(r for r in csv.DictReader(fh) if r["series"] == "placement" and r["placement"] == "candidate")
    assert int(row["seeds"]) == 1 and float(row["survivability_ci95"]) == 0.0  # --quick: one seed, no interval
    _, report = run_caching(brokers=int(row["brokers"]), placement="candidate", policy="lru", capacity=int(row["capacity"]),
                            alpha=float(row["alpha"]), messages=int(row["messages"]), seed=int(row["first_seed"]))
    assert float(row["survivability"]) == report["survivability"]
    assert float(row["request_hops"]) == report["request_hops"] and float(row["response_hops"]) == report["response_hops"]


def test_the_variants_series_sets_each_alternative_beside_its_default(quick):
    """The variants series (issue 54): each of the seeds' alternatives is a row beside the default of the same point,
    and each row is the simulation with that protocol option: suppression off sends more response messages and
    suppresses none; asking one neighbor sends fewer request messages."""
    out, _, _ = quick
    with open(out / "caching.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["series"] == "variants"]
    by = {(r["variant"], r["policy"], r["cache_share"]): r for r in rows}
    assert {v for v, _, _ in by} == set(bc.VARIANTS) - {""}
    default, off, one = by[("default", "lru", "0.05")], by[("no-suppression", "lru", "0.05")], by[("ask-one", "lru", "0.05")]
    assert float(off["duplicates_suppressed"]) == 0 < float(default["duplicates_suppressed"])
    assert float(off["response_hops"]) > float(default["response_hops"])
    assert float(one["request_hops"]) < float(default["request_hops"])
    _, report = run_caching(brokers=int(one["brokers"]), placement="candidate", policy="lru", capacity=int(one["capacity"]),
                            alpha=float(one["alpha"]), messages=int(one["messages"]), seed=int(one["first_seed"]),
                            variant=bc.VARIANTS["ask-one"])
    assert float(one["survivability"]) == report["survivability"]


def test_a_point_over_seeds_is_the_mean_of_its_runs_with_an_interval():
    """Five seeds: each metric is the mean of the five simulations, its
    half-width Student's t; a metric no run defines stays None."""
    reports = [bc.one_run(20, "candidate", "lru", 0.05, 0.8, 200, seed) for seed in range(3, 8)]
    row = bc.over_seeds([{**r, "series": "placement"} for r in reports])
    values = [r["survivability"] for r in reports]
    assert row["seeds"] == 5 and row["first_seed"] == 3 and row["series"] == "placement"
    assert row["survivability"] == round(sum(values) / 5, 4) and row["survivability_ci95"] > 0
    assert bc.over_seeds([{**r, "survivability": None} for r in reports[:2]])["survivability"] is None


def test_cache_ops_cross_checks_bite(monkeypatch):
    """A cache that evicts differently from its reference is reported."""
    real = cache_ops.run_impl

    def wrong(policy, capacity, ops):
        evicted, hits = real(policy, capacity, ops)
        return (evicted[1:] if policy == "lfu" else evicted), hits

    monkeypatch.setattr(cache_ops, "run_impl", wrong)
    _, disagreements = cache_ops.measure((10,), 200, 0.8, 2000, 2000, 1)
    assert any(d.startswith("lfu") for d in disagreements)
    assert not any(d.startswith("fifo") for d in disagreements)
