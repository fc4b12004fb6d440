"""`subsum fuzz reconfig` and `subsum replay` (spec/05-network.md, DEF-NET-8).

A schedule is an explicit list of operations (JSON objects): client
subscribe, unsubscribe and publish; `deliver` with the links chosen, in
order; overlay swap, break, add, crash, leave and join; quiesce. Seeded
generators draw schedules; the executor runs one on the simulator with
every broker checked against the model's handlers (CLM-NET-6) and the
CLM-NET checks after every operation. The first violation stops the run
and is saved as a replay file holding the topology, the seed and the
schedule up to the failing operation, so `subsum replay FILE` reproduces
it exactly, whatever the generator does in later versions.
"""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path
from typing import Callable

import attrs

from subsum.conformance import replay_schema
from subsum.conformance.budget import CheckTimeout, time_limit
from subsum.conformance.network import FILTERS, check_overlay, check_tables, publish_and_check
from subsum.conformance.violations import ClaimViolation, require
from subsum.core.filters import format_filter, parse_filter
from subsum.core.jsonio import write_lines_atomically
from subsum.core.types import Attribute, Event, Subscription, subscription_sort_key
from subsum.core.errors import InputError, SubsumError
from subsum.core.inputs import read_input_text
from subsum.core.plugins import looks_like_path
from subsum.impl.network import PROTOCOLS as PROTOCOL_REGISTRY
from subsum.impl.network import TOPOLOGIES, Network, build, forwarding_protocols, generate, read_edgelist

REPLAY_FORMAT = "subsum-replay"
#: The built-in protocols the fuzzer checks: the subscription-forwarding family,
#: whose every step the model's handlers describe (seed 002). A plug-in of
#: that family is checked too (`fuzzable`).
PROTOCOLS = forwarding_protocols()


def fuzzable(protocol: str) -> None:
    """Refuse a protocol the fuzzer cannot check, naming why (exit 2): an
    unknown name, a plug-in that cannot be loaded, or one outside the
    subscription-forwarding family."""
    from subsum.conformance.checked_brokers import checked_class

    if protocol not in PROTOCOLS and protocol in PROTOCOL_REGISTRY:
        raise SubsumError(f"protocol {protocol!r} is not of the subscription-forwarding family; "
                          f"the fuzzer checks {', '.join(PROTOCOLS)}, or a plug-in of that family")
    checked_class(protocol)


class ReplayError(InputError):
    """A replay file that cannot be read or run: `path: field 'f': message`."""

    def __init__(self, path: str | Path, field: str | None, message: str, line: int | None = None) -> None:
        super().__init__(str(path), line, field, message)


class ScheduleError(ValueError):
    """An operation no schedule can hold (an unknown kind): the schedule is bad, not the implementation."""


@attrs.frozen
class Violation:
    claim: str
    message: str
    step: int


def filter_text(f: Subscription) -> str:
    return format_filter(f) if f.constraints else ""


def filter_of(text: str) -> Subscription:
    return parse_filter(text) if text else Subscription()


# --- generating schedules --------------------------------------------------------------------

def random_event(rng: random.Random) -> dict:
    """Attributes over the names the filter pool uses, each present with probability 0.8."""
    values = {"x": rng.choice([-1, 0, 1, 2, 3]), "s": rng.choice(["", "a", "ab", "b", "ba"]), "b": rng.choice([True, False])}
    return {name: value for name, value in values.items() if rng.random() < 0.8}


def next_operation(rng: random.Random, net: Network, churn: float, broken: list = ()) -> dict:
    """One operation drawn for the current state of `net`; `broken` lists the
    broker pairs whose link broke, latest first (candidates for a re-link)."""
    clients = sorted(net.clients)
    links = net.broker_links()
    if rng.random() < churn:
        choices = ["swap", "break", "add", "crash", "leave", "join", "relink"]
        op = rng.choice(choices)
        if op == "swap" and links:
            a, b = rng.choice(links)
            return {"op": "swap", "old": [a, b], "pick": [rng.random(), rng.random()], "lose": rng.random() < 0.5,
                    "gap": rng.choice([0.0, 0.0, 3.0])}
        if op == "relink":
            roots = {b: min(net.overlay.component(b)) for b in net.brokers}
            pairs = [[a, b] for a, b in broken if a in roots and b in roots and roots[a] != roots[b]]
            if pairs:
                return {"op": "add", "link": rng.choice(pairs)}
        if op == "break" and links:
            return {"op": "break", "link": list(rng.choice(links)), "lose": rng.random() < 0.5}
        if op == "add":
            roots = sorted({min(net.overlay.component(b)) for b in net.brokers})
            if len(roots) > 1:
                a, b = rng.sample(roots, 2)
                return {"op": "add", "link": [a, b]}
        if op in ("crash", "leave") and len(net.brokers) > 1:
            return {"op": op, "broker": rng.choice(sorted(net.brokers)), "lose": rng.random() < 0.5}
        if op == "join" and net.brokers:
            return {"op": "join", "attach": rng.choice(sorted(net.brokers)), "clients": rng.randint(0, 2)}
    roll = rng.random()
    if roll < 0.25 and clients:
        return {"op": "subscribe", "client": rng.choice(clients), "filter": filter_text(rng.choice(FILTERS))}
    if roll < 0.35:
        holding = [c for c in clients if net.client_filters[c]]
        if holding:
            c = rng.choice(holding)
            return {"op": "unsubscribe", "client": c, "filter": filter_text(rng.choice(sorted(net.client_filters[c], key=subscription_sort_key)))}
    if roll < 0.5 and clients:
        return {"op": "publish", "client": rng.choice(clients), "attributes": random_event(rng)}
    if roll < 0.9 and net.transport.pending_links():
        # which link delivers next, k times: pending[choice % len(pending)] when the executor runs it
        return {"op": "deliver", "choices": [rng.randrange(1 << 16) for _ in range(rng.randint(1, 8))]}
    if roll < 0.94 and net.transport.pending_timers():
        # a timer fires now, whatever its timeout: timers[choice % len(timers)]
        return {"op": "fire", "choice": rng.randrange(1 << 16)}
    if roll < 0.96 and any(net.transport.head(link)[0] == "FLUSH" for link in net.transport.pending_links()):
        return {"op": "lose-flush", "choice": rng.randrange(1 << 16)}
    return {"op": "quiesce"}



# --- executing schedules ------------------------------------------------------------------------

class Run:
    """One schedule on one network under one protocol, checked after every
    operation; with `checked`, every broker step is also compared with the
    model's (CLM-NET-6, CLM-RCF-4, 5, 7)."""

    def __init__(self, topology: dict, seed: int, protocol: str = "strawman", defer_timeout: float = 3000.0,
                 sub_timeout: float = 5000.0, checked: bool = True, broker_class: type | None = None) -> None:
        from subsum.conformance.checked_brokers import checked_class

        self.topology = topology
        self.protocol = protocol
        if broker_class is None and checked:
            broker_class = checked_class(protocol)
        self.net = build([tuple(e) for e in topology["links"]], topology["brokers"], seed=seed, protocol=protocol,
                         broker_class=broker_class,
                         defer_timeout=defer_timeout, sub_timeout=sub_timeout)
        self.broken: list[tuple[int, int]] = []  # pairs whose link broke, latest first
        for broker, count in enumerate(topology["clients"]):
            for _ in range(count):
                self.net.add_client(broker)
        self.static = True
        self.events = 0

    def apply(self, op: dict) -> None:
        net, kind = self.net, op["op"]
        if kind == "subscribe":
            net.subscribe(op["client"], filter_of(op["filter"]))
        elif kind == "unsubscribe":
            net.unsubscribe(op["client"], filter_of(op["filter"]))
        elif kind == "publish":
            self._publish(op)
        elif kind == "deliver":
            for index in op["choices"]:
                pending = net.transport.pending_links()
                if pending:
                    net.transport.deliver_from(pending[index % len(pending)])
        elif kind == "quiesce":
            net.run()
            check_tables(net, "CLM-NET-2" if self.protocol in ("strawman", "external") else "CLM-RCF-1")
            self.static = True
        elif kind == "fire":
            timers = net.transport.pending_timers()
            if timers:
                net.transport.fire(timers[op["choice"] % len(timers)])
        elif kind == "lose-flush":
            flushes = [link for link in net.transport.pending_links() if net.transport.head(link)[0] == "FLUSH"]
            if flushes:
                net.transport.drop_head(flushes[op["choice"] % len(flushes)])
                self.static = False
        else:
            self._churn(op)
            self.static = False
        check_overlay(net)
        require(not net.ledger.violations, "CLM-NET-4", lambda: f"the simulator counted {dict(net.ledger.violations)}")

    def _churn(self, op: dict) -> None:
        net, kind = self.net, op["op"]
        if kind == "swap":
            a, b = op["old"]
            left, right = sorted(net.overlay.side(a, b)), sorted(net.overlay.side(b, a))
            net.swap((a, b), (left[int(op["pick"][0] * len(left))], right[int(op["pick"][1] * len(right))]),
                     gap=op.get("gap", 0.0), lose_in_flight=op["lose"])
            self.broken.insert(0, (a, b))
        elif kind == "break":
            net.disconnect(*op["link"], lose_in_flight=op["lose"])
            self.broken.insert(0, tuple(op["link"]))
        elif kind == "add":
            net.connect(*op["link"])
        elif kind in ("crash", "leave"):
            net.crash(op["broker"], graceful=kind == "leave", lose_in_flight=op["lose"])
        elif kind == "join":
            b = net.join(op["attach"])
            for _ in range(op["clients"]):
                net.add_client(b)
        else:
            raise ScheduleError(f"unknown operation {kind!r}")

    def _publish(self, op: dict) -> None:
        net = self.net
        event = Event(tuple(Attribute(n, {bool: "bool", int: "int", str: "string"}[type(v)], v) for n, v in op["attributes"].items()))
        publish_and_check(net, op["client"], event, self.static)


def execute(topology: dict, seed: int, schedule: list[dict], protocol: str = "strawman", defer_timeout: float = 3000.0,
            sub_timeout: float = 5000.0, broker_class: type | None = None) -> Violation | None:
    """Run a schedule and a final quiesce; the first violation, or None."""
    try:
        run = Run(topology, seed, protocol, defer_timeout, sub_timeout, broker_class=broker_class)
    except Exception as exc:  # the brokers failed while the network was built (step 0)
        return violation_of(exc, 0)
    for step, op in enumerate(schedule + [{"op": "quiesce"}]):
        try:
            run.apply(op)
        except Exception as exc:  # a failed check, or the implementation crashing
            return violation_of(exc, step)
    return None


def violation_of(exc: Exception, step: int) -> Violation:
    """A failed check names its claim in its type (`ClaimViolation`); any
    other exception is the implementation (or a check) crashing."""
    from subsum.conformance.external import ConformError

    if isinstance(exc, (ScheduleError, ConformError)):
        raise exc  # a bad schedule, or a command that cannot run: not the implementation's violation
    if isinstance(exc, ClaimViolation):
        return Violation(exc.claim, exc.message, step)
    return Violation("crash", f"{type(exc).__name__}: {exc}", step)


@attrs.define
class FuzzResult:
    schedules: int = 0
    operations: int = 0
    violations: list = attrs.field(factory=list)  # replay file paths
    claims: list = attrs.field(factory=list)  # the violated claim of each
    seconds: float = 0.0
    first_violation_seconds: float | None = None
    #: Operations of a schedule cut short when the budget ran out (not counted in `schedules`).
    cut_operations: int = 0

    @property
    def schedules_per_minute(self) -> float:
        return self.schedules / self.seconds * 60 if self.seconds else 0.0

    def report(self, **parameters) -> dict:
        """The run as JSON (`subsum fuzz reconfig --json`): its parameters, counts and violations."""
        return {**parameters, "schedules": self.schedules, "operations": self.operations, "seconds": round(self.seconds, 3),
                "schedules_per_minute": round(self.schedules_per_minute, 1),
                "first_violation_seconds": self.first_violation_seconds, "cut_operations": self.cut_operations,
                "violations": [{"claim": c, "replay": str(p)} for p, c in zip(self.violations, self.claims)]}


def make_topology(kind: str, brokers: int, seed: int, rng: random.Random, subscriptions: int) -> dict:
    if kind in TOPOLOGIES:
        links = generate(kind, brokers, seed)
    else:
        brokers, links, _ = read_edgelist(kind)
    clients = [0] * brokers
    for _ in range(max(1, subscriptions // 2)):
        clients[rng.randrange(brokers)] += 1
    return {"kind": kind if kind in TOPOLOGIES else str(kind), "brokers": brokers,
            "links": [list(e) for e in links], "clients": clients}


def initial_operations(rng: random.Random, net: Network) -> list[dict]:
    """Every client subscribes to 0-2 filters of the pool, then quiesce: the
    reconfigurations that follow have routes to move."""
    ops = [{"op": "subscribe", "client": c, "filter": filter_text(f)}
           for c in sorted(net.clients) for f in rng.sample(FILTERS, rng.randint(0, 2))]
    return ops + [{"op": "quiesce"}]


def draw_schedule(seed: int, *, topology: str = "random-tree", brokers: int = 6, subscriptions: int = 8,
                  churn: float = 0.1, steps: int = 60) -> tuple[dict, list[dict]]:
    """The schedule `fuzz` draws for `seed`, generated on an unchecked
    Strawman run (to run it again under other protocols)."""
    rng = random.Random(seed)
    topo = make_topology(topology, brokers, seed, rng, subscriptions)
    run = Run(topo, seed, checked=False)
    schedule = []
    for op in initial_operations(rng, run.net):
        schedule.append(op)
        run.apply(op)
    for _ in range(steps):
        op = next_operation(rng, run.net, churn, run.broken)
        schedule.append(op)
        run.apply(op)
    return topo, schedule


def fuzz(*, topology: str = "random-tree", brokers: int = 6, subscriptions: int = 8, churn: float = 0.1, steps: int = 60,
         seed: int = 0, budget: float = 30.0, schedules: int | None = None, replay_dir: Path = Path("fuzz-replays"),
         protocol: str = "strawman", defer_timeout: float = 3000.0, sub_timeout: float = 5000.0, max_violations: int = 10,
         progress: Callable[[FuzzResult], None] | None = None, shrink_budget: float = 10.0,
         shrinking: Callable[[Found], None] | None = None, broker_class: type | None = None,
         command: str | None = None) -> FuzzResult:
    """Draw schedules (schedule i uses seed + i) until the budget is spent,
    `schedules` ran, or `max_violations` were found. Then shrink each
    violating schedule for up to `shrink_budget` seconds (`shrink`; 0: not
    at all; `shrinking` is told before each) and save it as a replay file.
    Each schedule starts with every client subscribing (`initial_operations`).
    `broker_class` replaces the protocol's checked class (an external
    broker, whose `command` the replay files record)."""
    if broker_class is None:
        fuzzable(protocol)
    result = FuzzResult()
    found: list[Found] = []
    started = time.perf_counter()
    with time_limit(budget) as limit:  # a step (a model check on a large network) can outlast the budget
        try:
            _fuzz_until_done(result, found, started, topology=topology, brokers=brokers, subscriptions=subscriptions, churn=churn,
                             steps=steps, seed=seed, budget=budget, schedules=schedules, max_violations=max_violations,
                             protocol=protocol, defer_timeout=defer_timeout, sub_timeout=sub_timeout, progress=progress,
                             broker_class=broker_class)
        except CheckTimeout:
            assert limit.fired
    result.seconds = time.perf_counter() - started
    for case in found:
        schedule, violation = case.schedule, case.violation
        if shrink_budget > 0:
            if shrinking:
                shrinking(case)
            schedule, violation = shrink(case, shrink_budget)
        result.violations.append(save_replay(replay_dir, protocol, case.topology, case.seed, schedule, violation,
                                             defer_timeout, sub_timeout, shrunk_from=len(case.schedule), command=command))
        result.claims.append(violation.claim)
    return result


@attrs.frozen
class Found:
    """A violating schedule as the fuzzer found it, before shrinking."""

    topology: dict
    seed: int
    schedule: list
    violation: Violation
    protocol: str
    defer_timeout: float
    sub_timeout: float
    broker_class: type | None = None


def same_failure(got: Violation | None, want: Violation) -> bool:
    """Shrinking keeps a smaller schedule only if it fails the same way: the
    same claim, and for a crash the same exception type."""
    if got is None or got.claim != want.claim:
        return False
    return want.claim != "crash" or got.message.split(":")[0] == want.message.split(":")[0]


def shrink(case: Found, budget: float) -> tuple[list[dict], Violation]:
    """A smaller schedule that fails the same way (`same_failure`), found
    within `budget` seconds by delta debugging: drop chunks of operations,
    halving the chunk from half the schedule down to one operation, keeping
    every drop after which the failure remains; then shorten each `deliver`
    to its first choices. The schedule is cut after its failing step.

    Every candidate is run from scratch by `execute`, so the result replays
    exactly; an operation a shorter schedule makes meaningless (an unknown
    client, a link gone) fails differently and is not kept."""
    deadline = time.perf_counter() + budget

    def fails(schedule: list[dict]) -> Violation | None:
        try:
            got = execute(case.topology, case.seed, schedule, case.protocol, case.defer_timeout, case.sub_timeout, case.broker_class)
        except ScheduleError:
            return None
        return got if same_failure(got, case.violation) else None

    schedule, violation = list(case.schedule), case.violation
    schedule = schedule[:violation.step + 1]
    chunk = max(1, len(schedule) // 2)
    while chunk >= 1 and time.perf_counter() < deadline:
        i = 0
        while i < len(schedule) and time.perf_counter() < deadline:
            candidate = schedule[:i] + schedule[i + chunk:]
            got = fails(candidate) if candidate else None
            if got is not None:
                schedule, violation = candidate[:got.step + 1], got
            else:
                i += chunk
        chunk //= 2
    for i, op in enumerate(schedule):
        if op["op"] != "deliver" or time.perf_counter() >= deadline:
            continue
        for keep in range(1, len(op["choices"])):
            candidate = schedule[:i] + [{**op, "choices": op["choices"][:keep]}] + schedule[i + 1:]
            got = fails(candidate)
            if got is not None:
                schedule, violation = candidate[:got.step + 1], got
                break
    return schedule, violation


def _fuzz_until_done(result: FuzzResult, found: list[Found], started: float, *, topology, brokers, subscriptions, churn, steps,
                     seed, budget, schedules, max_violations, protocol, defer_timeout, sub_timeout, progress, broker_class) -> None:
    i = 0
    while ((schedules is None or i < schedules) and time.perf_counter() - started < budget
           and len(found) < max_violations):
        run_seed = seed + i
        rng = random.Random(run_seed)
        topo = make_topology(topology, brokers, run_seed, rng, subscriptions)
        schedule: list[dict] = []
        try:
            run = Run(topo, run_seed, protocol, defer_timeout, sub_timeout, broker_class=broker_class)
        except Exception as exc:  # the brokers failed while the network was built: a violation with no schedule
            found.append(Found(topo, run_seed, schedule, violation_of(exc, 0), protocol, defer_timeout, sub_timeout, broker_class))
            result.schedules += 1
            if result.first_violation_seconds is None:
                result.first_violation_seconds = time.perf_counter() - started
            i += 1
            continue
        violation = None
        opening = initial_operations(rng, run.net)
        for step in range(len(opening) + steps + 1):
            if time.perf_counter() - started >= budget:  # the budget holds inside a schedule too
                break
            if step < len(opening):
                op = opening[step]
            else:
                op = next_operation(rng, run.net, churn, run.broken) if step < len(opening) + steps else {"op": "quiesce"}
            schedule.append(op)
            try:
                run.apply(op)
            except Exception as exc:  # a failed check, or the implementation crashing
                violation = violation_of(exc, step)
                break
        if violation is None and len(schedule) < len(opening) + steps + 1:
            result.cut_operations += len(schedule)  # cut by the budget: not a checked schedule
            break
        result.schedules += 1
        result.operations += len(schedule)
        if violation is not None:
            found.append(Found(topo, run_seed, schedule, violation, protocol, defer_timeout, sub_timeout, broker_class))
            if result.first_violation_seconds is None:
                result.first_violation_seconds = time.perf_counter() - started
        i += 1
        if progress:
            result.seconds = time.perf_counter() - started
            progress(result)


def save_replay(folder: Path, protocol: str, topology: dict, seed: int, schedule: list[dict], violation: Violation,
                defer_timeout: float = 3000.0, sub_timeout: float = 5000.0, shrunk_from: int | None = None,
                command: str | None = None) -> Path:
    """Write a replay file; `shrunk_from` is the length of the schedule as found, before `shrink`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"replay-{re.sub(r'[^A-Za-z0-9_.-]', '_', protocol)}-seed{seed}.json"
    doc = {"format": REPLAY_FORMAT, "version": 1, "protocol": protocol, "defer_timeout": defer_timeout,
           "sub_timeout": sub_timeout, "seed": seed, "topology": topology,
           "schedule": schedule, "violation": attrs.asdict(violation)}
    if shrunk_from is not None and shrunk_from != len(schedule):
        doc["shrunk_from"] = shrunk_from
    if command is not None:
        doc["command"] = command
    write_lines_atomically(path, [json.dumps(doc, indent=1)])
    return path


def load_replay(path: Path, plugin: str | None = None, command: str | None = None) -> dict:
    """Read and validate a replay file. A file naming a plug-in as
    module:attribute runs only when `plugin` is given: replaying a file must
    not import a module just because the file says so. `plugin` runs in
    place of the recorded protocol (a fixed version, say). A replay of an
    external broker (`subsum conform broker`) runs the `command` given, never
    the one it records."""
    def no_constants(token: str):
        raise ReplayError(path, None, f"{token} is not a number a replay file may hold")

    try:
        doc = json.loads(read_input_text(path), parse_constant=no_constants)
    except ReplayError:
        raise
    except RecursionError:
        raise ReplayError(path, None, "malformed JSON: nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise ReplayError(path, None, f"malformed JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise ReplayError(path, None, f"malformed JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != REPLAY_FORMAT:
        raise ReplayError(path, "format", f"expected {REPLAY_FORMAT!r}")
    replay_schema.validate(doc, path)
    if doc["protocol"] == "external" or command is not None:
        if command is None:
            raise ReplayError(path, "protocol", f"this replay ran the external broker {doc.get('command')!r}; to run a command, "
                                                "pass --broker-cmd CMD")
        if plugin is not None or doc["protocol"] != "external":
            raise ReplayError(path, "protocol", f"--broker-cmd replays a schedule of `subsum conform broker`; this one ran "
                                                f"protocol {doc['protocol']!r}")
        doc["recorded_command"], doc["command"] = doc.get("command"), command
    elif plugin is not None:
        doc["recorded_protocol"], doc["protocol"] = doc["protocol"], plugin  # e.g. the fixed broker, on the old counterexample
    elif looks_like_path(doc["protocol"]):
        raise ReplayError(path, "protocol", f"this replay runs the plug-in {doc['protocol']}; to import it, pass "
                                            f"--protocol {doc['protocol']}")
    if command is None:
        try:
            fuzzable(doc["protocol"])
        except SubsumError as exc:
            raise ReplayError(path, "protocol", str(exc)) from None
    doc.setdefault("defer_timeout", 3000.0)
    doc.setdefault("sub_timeout", 5000.0)
    return doc


def replay(path: Path, plugin: str | None = None, command: str | None = None, timeout: float = 10.0) -> Violation | None:
    doc = load_replay(path, plugin, command)
    broker_class = None
    if command is not None:
        from subsum.conformance.external_broker import proxy_class

        broker_class = proxy_class(command, timeout)
    try:
        return execute(doc["topology"], doc["seed"], doc["schedule"], doc["protocol"], float(doc["defer_timeout"]),
                       float(doc["sub_timeout"]), broker_class)
    except (KeyError, TypeError, IndexError, ValueError) as exc:
        raise ReplayError(path, "schedule", f"cannot run it: {exc!r}") from None
