"""`subsum conform broker`: a broker written in any language, driven by
the simulator and checked against the model's handlers (spec/11-plugins.md
DEF-PLUG-6).

One process hosts every broker of a simulated network. `proxy_class(CMD)`
is a `Broker` class whose instances stand for those brokers. Each message
or link change for broker B goes to the process as one JSON line; the
process answers with the messages B sends, one JSON line each, and then an
empty line. The proxy keeps the model's state of B (DEF-NET-6) as a shadow,
runs the model's handler on it, and compares the answer with the model's
messages as a multiset (CLM-NET-6 on what a broker sends). It then sends
those messages on the simulator, and the fuzzer's checks (`subsum.conformance.schedules.fuzz`)
run as for any protocol. Each network, that is each schedule, starts a
fresh process (`shared_state`).
"""

from __future__ import annotations

import atexit
import json
import shutil
from collections import Counter
from typing import BinaryIO

from subsum.conformance.kit.engines import LOG_HEADER, PersistentEngine
from subsum.conformance.kit.processes import ConformError, split_command
from subsum.conformance.kit.profile import Profile, Used, features_of
from subsum.conformance.checks.network.forwarding import FILTERS
from subsum.conformance.schedules.runs import EVENT_TYPES, Pool, filter_text
from subsum.conformance.runner.violations import ProcessFailure, listed, require, shown
from subsum.conformance.schedules.families import EXTERNAL  # noqa: F401  (the replay files' protocol name for an external broker)
from subsum.core.jsonio import RecordError, event_to_json, filter_from_json, filter_to_json
from subsum.core.types import Subscription
from subsum.impl.network import CLIENT_BASE, Broker, handles
from subsum.impl.network.messages import Publication
from subsum.impl.network.actor import Out
from subsum.model import strawman as ref



class ExternalBrokerFailure(ProcessFailure):
    """The process timed out, crashed, or answered with something that is not a message (kind: timeout, crash,
    malformed)."""

    def __init__(self, message: str, kind: str = "malformed") -> None:
        super().__init__(kind, message)


def _message(line: bytes, broker: int) -> tuple[int, str, object]:
    try:
        obj = json.loads(line)
    except ValueError as exc:
        raise ExternalBrokerFailure(f"broker {broker}: an answer line is not JSON ({exc}): {line[:200]!r}") from None
    if not (isinstance(obj, dict) and isinstance(obj.get("to"), int) and obj.get("kind") in ("SUB", "UNSUB", "EVENT")):
        raise ExternalBrokerFailure(f"broker {broker}: an answer line is not a message {{\"to\": N, \"kind\": ...}}: {line[:200]!r}")
    if obj["kind"] == "EVENT":
        if set(obj) != {"to", "kind", "id"}:
            raise ExternalBrokerFailure(f"broker {broker}: an EVENT answer is {{\"to\", \"kind\", \"id\"}}: {line[:200]!r}")
        return obj["to"], "EVENT", obj["id"]
    if set(obj) != {"to", "kind", "filter"}:
        raise ExternalBrokerFailure(f"broker {broker}: a {obj['kind']} answer is {{\"to\", \"kind\", \"filter\"}}: {line[:200]!r}")
    try:
        return obj["to"], obj["kind"], filter_from_json(obj["filter"])
    except (RecordError, ValueError) as exc:
        raise ExternalBrokerFailure(f"broker {broker}: a filter in its answer cannot be read: {exc}") from None


class ExternalBroker(Broker):
    """One broker hosted by the external process (`command`, set by `proxy_class`)."""

    __slots__ = ("state",)
    command = ""
    timeout = 10.0
    stderr_log: BinaryIO | None = None  # --stderr-log
    processes_started = 0  # for the log's headers
    _running: list[PersistentEngine] = []

    def __init__(self, bid: int, shared) -> None:
        super().__init__(bid, shared)
        self.state = ref.BrokerState(bid, frozenset(), frozenset(), frozenset())
        # a broker starts empty; a joining broker may reuse the id of one that crashed or left
        if self.ask({"kind": "START"}, shared):
            raise ExternalBrokerFailure(f"broker {bid}: answered START with messages")

    @classmethod
    def shared_state(cls, net) -> PersistentEngine:
        """A fresh process for each network; the previous one is closed. With --stderr-log, its standard error
        goes to the log, after a line that numbers the process."""
        close_processes(cls)
        process = PersistentEngine(cls.command, cls.timeout)
        if cls.stderr_log is not None:
            cls.processes_started += 1
            cls.stderr_log.write(LOG_HEADER + f" broker: process {cls.processes_started} (a fresh network) ---\n".encode())
            process.stderr_log = cls.stderr_log
        cls._running.append(process)
        return cls._running[0]

    def entries(self) -> set[tuple[int, Subscription]]:
        return set(self.state.table)

    def ask(self, request: dict, process: PersistentEngine) -> list[tuple[int, str, object]]:
        received = process.exchange(json.dumps({"broker": self.id, **request}))
        if received.failure is not None:
            raise ExternalBrokerFailure(f"broker {self.id}, {request['kind']}: {received.failure}", received.failure.kind)
        return [_message(line, self.id) for line in received.stdout.split(b"\n") if line]

    def _step(self, what: str, request: dict, model_step, out: Out) -> None:
        want_state, want = model_step(self.state)
        got = self.ask(request, out.shared)
        if any(kind == "EVENT" for _, kind, _ in got):
            raise ExternalBrokerFailure(f"broker {self.id} {what}: answered with an EVENT")
        require(Counter(map(shown, got)) == Counter(map(shown, want)), "CLM-NET-6",
                lambda: f"broker {self.id} {what}: sent {listed(got)}, the model sends {listed(want)}")
        self.state = want_state
        for dst, kind, f in got:
            out.send(dst, kind, f)

    @handles("SUB")
    def sub_received(self, n: int, f: Subscription, out: Out) -> None:
        self._step(f"SUB from {n}", {"kind": "SUB", "from": n, "filter": filter_to_json(f)}, lambda s: ref.on_sub(s, n, f), out)

    @handles("UNSUB")
    def unsub_received(self, n: int, f: Subscription, out: Out) -> None:
        self._step(f"UNSUB from {n}", {"kind": "UNSUB", "from": n, "filter": filter_to_json(f)}, lambda s: ref.on_unsub(s, n, f),
                   out)

    @handles("EVENT")
    def event_received(self, n: int, publication: Publication, out: Out) -> None:
        eid, event = publication.eid, publication.event
        got = self.ask({"kind": "EVENT", "from": n, "id": eid, "event": event_to_json(str(eid), event)["attributes"]}, out.shared)
        if any(kind != "EVENT" or ref_id != eid for _, kind, ref_id in got):
            raise ExternalBrokerFailure(f"broker {self.id} EVENT {eid} from {n}: answered with {got}")
        targets = [dst for dst, _, _ in got]
        want = ref.event_targets(self.state, n, event)
        require(Counter(targets) == Counter(want), "CLM-NET-6",
                lambda: f"broker {self.id} EVENT from {n}: forwarded to {sorted(targets)}, the model to {sorted(want)}")
        if targets:
            out.route_event(targets, publication)

    def link_added(self, n: int, rid: int | None, out: Out) -> None:
        client = n >= CLIENT_BASE
        self.neighbors.add(n)
        self._step(f"addLinkTo({n})", {"kind": "LINK-ADDED", "neighbor": n, "client": client, "reconfiguration": rid},
                   lambda s: ref.on_add_link(s, n, client), out)

    def link_removed(self, n: int, rid: int | None, replacement: tuple | None, out: Out) -> None:
        self.neighbors.discard(n)
        self._step(f"removeLinkTo({n})", {"kind": "LINK-REMOVED", "neighbor": n, "reconfiguration": rid},
                   lambda s: ref.on_remove_link(s, n), out)


#: every proxy class made, so that their processes can be closed (`close_processes`)
_CLASSES: list[type[ExternalBroker]] = []


def proxy_class(command: str, timeout: float = 10.0, stderr_log: BinaryIO | None = None) -> type[ExternalBroker]:
    """The broker class for one external command; its command is checked first (exit 2 if it cannot run)."""
    argv = split_command(command, "--broker-cmd")
    if shutil.which(argv[0]) is None:
        raise ConformError(f"--broker-cmd {command!r}: cannot run {argv[0]!r}: no such executable")
    cls = type("ExternalBroker", (ExternalBroker,), {"command": command, "timeout": timeout, "stderr_log": stderr_log, "processes_started": 0,
                                                     "_running": [], "__slots__": ()})
    _CLASSES.append(cls)
    return cls


def pool_for(profile: Profile) -> Pool:
    """The schedules' filters and event attributes within a declared feature set (DEF-PLUG-7); exit 2 if no filter
    with a constraint is left."""
    filters = tuple(f for f in FILTERS if profile.admits(features_of([("f", f)], [], [True])))
    if not any(f.constraints for f in filters):
        raise ConformError("--unsupported leaves no filter of the broker schedules' pool ("
                           + ", ".join(filter_text(f) for f in FILTERS if f.constraints) + ")")
    return Pool(filters, frozenset(n for n, t in EVENT_TYPES.items() if t not in profile.types))


def exercised(pool: Pool) -> Used:
    """What schedules drawn from `pool` can send: its filters' operators and types, and its events' types
    (filters travel as constraints arrays, DEF-PLUG-6, so no feature of DEF-PLUG-7)."""
    return Used(frozenset(c.op for f in pool.filters for c in f.constraints),
                frozenset(c.type for f in pool.filters for c in f.constraints) | {EVENT_TYPES[n] for n in pool.names}, frozenset())


def close_processes(*classes: type[ExternalBroker]) -> None:
    """Close the running processes of these proxy classes (of all, given none), and their process groups."""
    for cls in classes or tuple(_CLASSES):
        while cls._running:
            cls._running.pop().close()


atexit.register(close_processes)
