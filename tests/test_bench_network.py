"""The network and reconfiguration benchmarks run, compare like with like,
and write their files (the figures themselves are in benchmarks/results/)."""

import csv

from subsum.bench import network as bn
from subsum.bench import reconfig as br


def test_every_protocol_sees_the_same_overlay_and_workload():
    for kind in br.KINDS:
        runs = {p: br.run_protocol(p, "random-tree", 20, 2.0, kind, 4, seed=3) for p in br.PROTOCOLS}
        links = {p: tuple(r["final_links"]) for p, r in runs.items()}
        assert len(set(links.values())) == 1, (kind, links)
        assert len({r["ideal_deliveries"] for r in runs.values()}) == 1, kind
        assert all(r["reconfigurations"] == 4 for r in runs.values()), kind
        assert runs["strawman"]["flush"] == runs["strawman"]["activate"] == 0
        assert runs["timed"]["flush"] == 0 and runs["notified"]["flush"] > 0
        assert runs["informed"]["activate"] > 0


def test_reconfig_bench_writes_csv_plots_and_summary(tmp_path):
    configs = [("random-tree", 20, 1.0, kind) for kind in br.KINDS]
    summary = br.run(tmp_path, quick=True, configs=configs, log=lambda m: None)
    rows = list(csv.DictReader(open(tmp_path / "reconfig.csv")))
    assert len(rows) == len(configs) * len(br.PROTOCOLS)
    assert all(float(r["reduction_sub_unsub"]) == 0.0 for r in rows if r["protocol"] == "strawman")
    for name in ("control.png", "lost.png", "stale.png", "summary.json"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert set(summary["by_protocol"]) == set(br.PROTOCOLS)
    assert "| informed |" in br.markdown_table(summary)


def test_network_bench_writes_csv_plots_and_summary(tmp_path):
    summary = bn.run(tmp_path, brokers=40, subscriptions=200, events=20, swap_brokers=30, swap_subscriptions=60, swaps=5,
                     fuzz_budget=1.0, log=lambda m: None)
    rows = list(csv.DictReader(open(tmp_path / "network.csv")))
    assert {r["section"] for r in rows} == {"throughput", "swaps", "fuzz"}
    assert summary["swaps"]["swaps"] == 5 and summary["throughput"]["burst"]["event_messages"] > 0
    assert all(f["violations"] == 0 for f in summary["fuzz"])
    for name in ("throughput.png", "swaps.png", "summary.json"):
        assert (tmp_path / name).stat().st_size > 0, name
