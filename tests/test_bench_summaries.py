"""The subscription-summaries benchmark (subsum/bench/summaries*.py): its
outputs, its cross-checks and its generator. Nothing here asserts timings."""

import csv

from subsum.bench.summaries import bench as bs
from subsum.bench.summaries import workload
from subsum.bench.summaries.measure import BROKERS, covering_share
from subsum.bench.summaries.report import markdown_table
from subsum.impl.summary import IdLayout, OwnerSummary


def test_quick_run_writes_every_file_without_disagreements(quick_bench):
    run = quick_bench("summaries", bs.run)
    out, result, messages = run
    saved = run.written(("summaries.csv", "scaling.csv", "scaling.png", "sizes.png", "false_positives.png", "throughput.png",
                         "summary.json"))
    with open(out / "summaries.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [float(r["p"]) for r in rows] == list(workload.PROBABILITIES)
    assert result["disagreements"] == []
    assert saved["disagreements"] == []
    for r in rows:
        assert int(r["disagreements"]) == 0
        for field in ("summary_formula_bytes", "summary_binary_bytes", "raw_formula_bytes", "raw_jsonl_bytes",
                      "rows", "id_entries"):
            assert float(r[field]) > 0, field
        # The summary reports at least every true match (no false negatives).
        assert int(r["reported_pairs"]) >= int(r["true_pairs"]) > 0
    assert messages and any("p=0.9" in m for m in messages)
    table = markdown_table(result["rows"])
    assert table.count("\n") == len(workload.PROBABILITIES) + 1
    with open(out / "scaling.csv", newline="") as fh:
        scaled = list(csv.DictReader(fh))
    assert {(float(r["p"]), int(r["subscriptions"])) for r in scaled} == {(p, s) for p in (0.1, 0.5, 0.9) for s in (100, 200, 400)}
    for r in scaled:  # each subscription adds five ID entries (one per constrained attribute), removal aside
        assert float(r["id_entries"]) == 5 * int(r["subscriptions"]) and r["match_us_per_event_ci95"] != ""


def test_generator_is_deterministic_for_a_seed():
    a = workload.generate(0.5, 100, 50, seed=7)
    b = workload.generate(0.5, 100, 50, seed=7)
    c = workload.generate(0.5, 100, 50, seed=8)
    assert a.subscriptions == b.subscriptions and a.events == b.events
    assert a.subscriptions != c.subscriptions


def test_generator_shape_follows_table_5_2():
    w = workload.generate(0.5, 50, 50, seed=3)
    for _, sub in w.subscriptions:
        keys = {(c.name, c.type) for c in sub.constraints}
        assert len(keys) == 5 and sum(k[1] in ("int", "float") for k in keys) == 2
    for e in w.events:
        assert len(e.attributes) == 5 and sum(a.type in ("int", "float") for a in e.attributes) == 2


def _realized(p, subscriptions=200, seed=1):
    w = workload.generate(p, subscriptions, 0, seed)
    owner = OwnerSummary(0, IdLayout(BROKERS, subscriptions, len(workload.SCHEMA)), workload.SCHEMA)
    for name, sub in w.subscriptions:
        assert owner.add(name, sub) is not None
    return w.covered_drawn, covering_share(owner.export())


def test_realized_covering_share_increases_with_p():
    shares = [_realized(p) for p in workload.PROBABILITIES]
    drawn = [d for d, _ in shares]
    realized = [r for _, r in shares]
    assert drawn == sorted(drawn) and realized == sorted(realized)
    assert realized[0] < 0.2 < 0.8 < realized[-1]
    for p, (d, r) in zip(workload.PROBABILITIES, shares):
        assert abs(d - p) < 0.05 and r <= d
