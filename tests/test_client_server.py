"""The client-server system (spec/10-client-server.md): the golden examples
and the property of conformance.checks.caching.client_server fail on bugs planted in the
reference protocol."""

from __future__ import annotations

import attrs
import pytest

from subsum.conformance.checks.caching import client_server as checks
from subsum.conformance.runner import profiles
from subsum.conformance.checks.matching.properties import run_property
from subsum.conformance.replays import documents
from subsum.model import client_server as ref


@pytest.fixture(autouse=True)
def ci_profile():
    profiles.load("ci")


def test_relays_that_forget_to_cache_are_caught(monkeypatch, first_failure):
    """SC (and SOHA, SS) without en-route caching: the golden example and the property fail."""
    monkeypatch.setattr(ref, "insert", lambda cache, m, now: (cache, None))
    with pytest.raises(AssertionError):
        checks.seed003_server_cache()
    with pytest.raises(AssertionError, match="relay"):
        run_property(checks.policies_compare_on_identical_state)


def test_the_answer_must_be_the_nearest_response(monkeypatch):
    """Taking the path's response as the answer, not the nearest one: SOHA's example and the property fail."""
    monkeypatch.setattr(ref, "answering_order", lambda r: (not r.from_path, r.hops, r.position, r.responder))
    with pytest.raises(AssertionError):
        checks.seed003_server_one_hop_away()


def test_soha_neighbors_that_forward_further_are_caught(monkeypatch, first_failure):
    """SOHA's active neighbors must not forward: asking the neighbors' neighbors fails the property."""
    real = ref.serve

    def forwarding(system, policy, broker, m, now):
        after, outcome = real(system, policy, broker, m, now)
        if policy == "soha":
            extra = tuple(q for b in outcome.asked for q in system.graph[b] if q not in outcome.asked and q != broker)
            outcome = ref.Outcome(outcome.responses, outcome.asked + extra, answer_server=outcome.answer_server)
        return after, outcome

    monkeypatch.setattr(ref, "serve", forwarding)
    with pytest.raises(AssertionError, match="SOHA asked"):
        run_property(checks.policies_compare_on_identical_state)


# --- the simulator's protocol against the reference (CLM-CS-5) ---------------------------

from subsum.impl.network.protocols import client_server as impl  # noqa: E402


def test_simulator_relays_that_forget_to_cache_are_caught(monkeypatch, first_failure):
    """SC's en-route caching left out of the simulator's protocol."""
    monkeypatch.setattr(impl.ClientServerBroker, "response_received",
                        lambda self, src, r, out: self.pass_response(out.shared.requests[r.rid], r.stack, r.answer, r.hops, out))
    with pytest.raises(AssertionError, match="CLM-CS-5"):
        run_property(checks.simulator_equals_reference)


def test_soha_neighbors_forwarding_further_in_the_simulator_are_caught(monkeypatch, first_failure):
    """A SOHA active neighbor that misses passes the probe on instead of dropping it."""
    real = impl.ClientServerBroker.request_received

    def forwarding(self, src, request, out):
        if request.mode == "probe" and str(request.message) not in self.cache and len(request.stack) < 4:
            for q in self.brokers_around():
                if q != src:
                    out.send(q, "REQUEST", attrs.evolve(request, stack=(self.id, *request.stack)))
        real(self, src, request, out)

    monkeypatch.setattr(impl.ClientServerBroker, "request_received", forwarding)
    with pytest.raises(AssertionError, match="CLM-CS-5"):
        run_property(checks.simulator_equals_reference)


def test_a_hit_not_counted_by_the_cache_is_caught(monkeypatch, first_failure):
    """Caches that ignore request hits (LFU's count, LRU's access, regeneration's move to the head)."""
    from subsum.impl.caching import policies

    for cls in (policies.RegenerationDegradation, policies.RateLFU, policies.LRU):
        monkeypatch.setattr(cls, "hit", lambda self, messages, now: None)
    with pytest.raises(AssertionError, match="CLM-CS-5"):
        run_property(checks.simulator_equals_reference)


# --- the driver and `subsum simulate client-server` ------------------------------------

def run_cli(*args: str):
    from click.testing import CliRunner

    from subsum.cli import main

    return CliRunner().invoke(main, list(args))


def test_simulate_client_server_json_is_deterministic_and_sane():
    import json

    reports = {}
    for policy in ("server", "sc", "soha", "ss"):
        runs = [run_cli("simulate", "client-server", "--request-policy", policy, "--brokers", "15", "--steps", "800", "--seed", "4",
                        "--format", "json")
                for _ in range(2)]
        assert all(r.exit_code == 0 for r in runs), runs[0].output
        first, second = (json.loads(r.stdout) for r in runs)
        first.pop("seconds"), second.pop("seconds")
        assert first == second  # the same seed, the same metrics
        assert {"delay", "overhead", "hit", "requests"} <= set(first)
        assert 0 <= first["hit"] <= 1 and first["overhead"] >= 0 and first["requests"] > 0
        reports[policy] = first
    assert reports["server"]["hit"] == 0 and reports["server"]["overhead"] == 0
    assert reports["sc"]["overhead"] == 0
    assert len({r["requests"] for r in reports.values()}) == 1  # one request stream, whatever the policy
    assert reports["sc"]["delay"] <= reports["server"]["delay"]  # each request's SC delay is at most its tree distance


@pytest.mark.parametrize("args, message", [
    (["forwarding", "--slots", "3"], "No such option '--slots'"),  # each simulation takes only its own options
    (["client-server", "--placement", "all"], "No such option '--placement'"),
    (["client-server", "--swaps", "2"], "No such option '--swaps'"),
    (["client-server", "--mu", "2"], "--mu"),
    (["client-server", "--lambda", "nan"], "--lambda"),
    (["client-server", "--ss-memory", "-1"], "--ss-memory"),
    (["client-server", "--ss-memory", "soon"], "--ss-memory"),
    (["--client-server", "sc"], "`--client-server P` is `simulate client-server --request-policy P`"),
])
def test_simulate_client_server_refuses_what_makes_no_sense(args, message):
    result = run_cli("simulate", *args)
    assert result.exit_code == 2 and message in result.stderr.replace("\n", " "), result.stderr


def test_a_failure_of_the_simulator_check_replays_in_another_process(monkeypatch, tmp_path):
    """CLM-CS-5's failing case is a replay file; `subsum replay FILE` exits 1
    on it in a process carrying the same bug, and 0 in one without it."""
    import subprocess
    import sys
    import textwrap

    monkeypatch.setattr(documents, "FUZZ_FOLDER", tmp_path)
    bug = textwrap.dedent("""
        from subsum.impl.network.protocols import client_server as impl
        impl.ClientServerBroker.response_received = (
            lambda self, src, r, out: self.pass_response(out.shared.requests[r.rid], r.stack, r.answer, r.hops, out))
    """)
    monkeypatch.setattr(impl.ClientServerBroker, "response_received",
                        lambda self, src, r, out: self.pass_response(out.shared.requests[r.rid], r.stack, r.answer, r.hops, out))
    with pytest.raises(AssertionError, match="Replay: subsum replay") as failure:
        run_property(checks.simulator_equals_reference)
    path = next(p for p in tmp_path.glob("client-server-*.json") if str(p) in str(failure.value))
    with_bug = subprocess.run([sys.executable, "-c", bug + "from subsum.cli import main\nmain(['replay', %r], prog_name='subsum')" % str(path)],
                              capture_output=True, text=True, timeout=120)
    assert with_bug.returncode == 1 and "Traceback" not in with_bug.stderr, with_bug.stdout + with_bug.stderr
    fixed = subprocess.run([sys.executable, "-m", "subsum", "replay", str(path)], capture_output=True, text=True, timeout=120)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr


def test_bad_client_server_replay_files(tmp_path):
    import json

    path = tmp_path / "r.json"
    path.write_text(json.dumps({"format": "subsum-client-server-replay", "version": 1, "brokers": 2, "links": [[0, 5]], "servers": {},
                                "policy": "sc", "cache_policy": "lfu", "capacity": 1, "requests": []}))
    result = run_cli("replay", str(path))
    assert result.exit_code == 2 and "field 'links[0]': link (0, 5) names a broker outside" in result.stderr, result.stderr


# --- the request process (DEF-CS-4, seed 003 §5.2) ------------------------------------

def requests_in(schedule) -> int:
    return sum(1 for step, _, _ in schedule if step)


def test_the_default_request_process_has_the_thesis_magnitude():
    """Seed 003 §5.2: "on average 400000 requests" a run at N = K = 10,
    λ = μ = 0.05, MC = 5000. Poisson(λ·N·M(t)) gives about 3.1×10^5, within
    a factor of 2 of it; Poisson(λ·N), the old reading, gives 2,500."""
    from subsum.impl.network.workloads.client_server import schedule

    for seed in (1, 2):
        assert 200_000 <= requests_in(schedule(10, seed=seed)) <= 800_000
    assert 2_200 <= requests_in(schedule(10, seed=1, request_process="per-broker")) <= 2_800


def test_a_run_serves_its_schedule_and_refuses_an_unknown_process():
    from subsum.impl.network.workloads.client_server import run_client_server, schedule

    for process in ("per-message", "per-broker"):
        _, report = run_client_server(steps=200, seed=3, request_process=process)
        assert report["requests"] == requests_in(schedule(10, steps=200, seed=3, request_process=process)) > 0
        assert report["request_process"] == process
    with pytest.raises(ValueError, match="unknown request process 'per-step'"):
        run_client_server(steps=10, request_process="per-step")


@pytest.mark.parametrize("policy", ["server", "sc", "soha", "ss"])
def test_the_direct_driver_reports_what_the_simulator_reports(policy):
    """client_server_direct serves the same schedule by walking the tree; its
    report equals the simulator's run for run, under every cache policy and
    both request processes and SS's readings of an interested broker
    (ever, the same step, the last 5 steps), on trees of several shapes."""
    from subsum.impl.network.workloads.client_server import run_client_server
    from subsum.impl.network.workloads.client_server_direct import run_client_server_direct

    for cache in ("fifo", "regdeg", "lfu", "lru"):
        for process, brokers, slots, seed, memory in (("per-message", 12, 3, 5, None), ("per-broker", 30, 2, 6, 5),
                                                      ("per-message", 7, 5, 7, 0)):
            run = dict(policy=policy, cache_policy=cache, brokers=brokers, slots=slots, steps=250, mu=0.2, seed=seed, request_process=process,
                       ss_memory=memory)
            simulated, direct = run_client_server(**run)[1], run_client_server_direct(**run)
            assert simulated == direct and direct["requests"] > 100, (run, simulated, direct)


def test_soha_probing_the_clients_broker_only_is_the_same_on_both_drivers_and_probes_less():
    """SOHA's option `soha_probes` "client" (spec/10 DEF-CS-2's narrower reading): both drivers report the same run
    for run; it never has more overhead than the default reading, and has less somewhere (so the option acts); the
    hits split by where they were answered add up to the hit ratio, and some hit is answered off the path."""
    from subsum.impl.network.workloads.client_server import run_client_server
    from subsum.impl.network.workloads.client_server_direct import run_client_server_direct

    less = off = False
    for brokers, seed in ((20, 1), (35, 2), (50, 3)):
        run = dict(policy="soha", brokers=brokers, steps=250, seed=seed)
        narrow = run_client_server_direct(**run, soha_probes="client")
        assert run_client_server(**run, soha_probes="client")[1] == narrow
        wide = run_client_server_direct(**run)
        assert narrow["overhead"] <= wide["overhead"]
        less |= narrow["overhead"] < wide["overhead"]
        for report in (narrow, wide):
            assert abs(report["hit_client"] + report["hit_path"] + report["hit_off"] - report["hit"]) <= 3e-4
            off |= report["hit_off"] > 0
    assert less and off


def test_lfus_other_tie_rule_is_the_same_on_both_drivers_and_changes_the_run():
    """Option `lfu_ties` "oldest" (spec/09 DEF-CACHE-4's other rule) reaches both drivers' caches: the same report
    run for run, and a report that differs from the default rule's somewhere (so the option acts)."""
    from subsum.impl.network.workloads.client_server import run_client_server
    from subsum.impl.network.workloads.client_server_direct import run_client_server_direct

    differs = False
    for brokers, seed in ((10, 1), (30, 2)):
        run = dict(policy="sc", brokers=brokers, slots=3, steps=250, seed=seed)
        oldest = run_client_server_direct(**run, lfu_ties="oldest")
        assert run_client_server(**run, lfu_ties="oldest")[1] == oldest
        newest = run_client_server_direct(**run)
        differs |= {k: v for k, v in oldest.items() if k != "lfu_ties"} != newest
    assert differs


@pytest.mark.parametrize("memory", [0, 3, None])
def test_ss_asks_the_requesters_its_reading_names(memory):
    """spec/10, SS's interested brokers: with ss_memory = S, every broker SS
    asks off the AT path had a client request the same message within the
    last S steps (S = 0: the same step); with None, at any earlier time.
    The same-step reading asks fewer brokers than the ever reading."""
    from typing import cast

    from subsum.impl.network.workloads.client_server import run_client_server

    net, report = run_client_server(policy="ss", brokers=15, slots=2, mu=0.2, steps=200, seed=3, ss_memory=memory)
    records = sorted(cast(impl.ClientServerNetwork, net.shared).requests.values(), key=lambda r: r.rid)
    asked_off_path = 0
    for k, record in enumerate(records):
        path = set(net.overlay.path(record.broker, record.server_broker))
        earlier = [r.now for r in records[:k] if r.message == record.message]
        for q in set(record.asked) - path:
            times = [r.now for r in records[:k] if r.message == record.message and r.broker == q]
            assert times, (record, q, earlier)
            asked_off_path += 1
            assert memory is None or max(times) >= record.now - memory, (record, q, times)
    assert report["requests"] > 500 and asked_off_path > 0
