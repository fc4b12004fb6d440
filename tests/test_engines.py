"""The engine interface, the `match` command with every engine, the seed 001
workload generator and the DuckDB peer."""

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings

from subsum.bench.matching.workload import Params, generate
from subsum.cli import main
from subsum.cli.match import ENGINE_NAMES
from subsum.conformance import strategies as gen
from subsum.core.filters import parse_filter
from subsum.core.types import Attribute, Event
from subsum.impl.matching import ENGINES, make_engine
from subsum.model import semantics

S1 = parse_filter('price > 8.30 and price < 8.70')


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_interface_errors_and_empty_inputs(name):
    engine = make_engine(name, [("s1", S1)])
    with pytest.raises(ValueError, match="'s1' is already present"):
        engine.add("s1", S1)
    with pytest.raises(KeyError, match="no subscription 'nope' to remove"):
        engine.remove("nope")
    assert engine.match_batch([]) == []
    assert engine.match_batch([Event()]) == [set()]
    engine.remove("s1")
    assert len(engine) == 0 and engine.match_batch([Event((Attribute("price", "float", 8.4),))]) == [set()]


def test_unknown_engine_is_named():
    with pytest.raises(ValueError, match="unknown engine .fast.; choose one of brute, compiled, counting"):
        make_engine("fast")


@pytest.mark.parametrize("engine", ENGINE_NAMES)
def test_match_command_gives_the_golden_lines_with_every_engine(engine, tmp_path):
    stats = tmp_path / "stats.json"
    result = CliRunner().invoke(main, [
        "match", "--subscriptions", "examples/seed000/subscriptions.jsonl", "--events",
        "examples/seed000/events.jsonl", "--engine", engine, "--stats", "--json", str(stats)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.strip().splitlines()[0]) == {"event": "fig-2-2", "subscriptions": ["S1"]}
    figures = json.loads(stats.read_text())
    assert figures["engine"] == engine and figures["matches"] == 1 and figures["events"] == 1
    if engine != "model":
        assert figures["attributes"] == 6 and figures.get("distinct_attributes", 6) == 6
    if engine not in ("model", "spark"):
        assert figures["index_lookups"] >= 0


def test_generator_is_deterministic_and_plants_matches():
    p = Params(events=60, subscriptions=40, names=50, planted_rate=0.5, seed=7)
    a, b = generate(p), generate(p)
    assert a.subscriptions == b.subscriptions and a.events() == b.events()
    assert a.events() != generate(Params(events=60, subscriptions=40, names=50, planted_rate=0.5, seed=8)).events()
    results = semantics.match_batch(a.subscriptions, a.events())
    assert a.planted > 10 and sum(1 for r in results if r) >= a.planted
    for event in a.events():  # names per event within [a_l, a_h], unless a planted subscription needs more
        assert len(event.attributes) >= p.attrs_low


@pytest.mark.parametrize("bad, message", [
    (dict(attrs_low=40, attrs_high=30), "need 0 <= a_l <= a_h <= A_n"),
    (dict(cons_low=10, cons_high=600), "need 0 <= c_l <= c_h <= A_n"),
    (dict(planted_rate=1.5), "planted_rate must lie in"),
    (dict(planted_rate=float("nan")), "planted_rate must lie in"),
    (dict(events=-1), "events must be >= 0"),
])
def test_generator_rejects_bad_parameters(bad, message):
    with pytest.raises(ValueError, match=message):
        Params(**bad)


@settings(max_examples=25)
@given(gen.workloads())
def test_duckdb_peer_agrees_with_the_model(workload):
    """The benchmark's peer is only a fair comparison if it computes the same thing."""
    from subsum.bench.peer import DuckDBPeer
    from subsum.impl.matching.columnar.batch import ColumnarBatch

    subscriptions, events = workload
    peer = DuckDBPeer(subscriptions, threads=1)
    peer.load_events(ColumnarBatch.from_events(events))
    ev, slot = peer.match()
    got = [set() for _ in events]
    for e, s in zip(ev.tolist(), slot.tolist()):
        got[e].add(subscriptions[s][0])
    assert got == semantics.match_batch(subscriptions, events)
