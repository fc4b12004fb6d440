"""The memo of local steps of `subsum explore` (spec/12-exploration.md
DEF-EXP-7).

A delivery changes one broker. Where its protocol says so
(`Broker.local_deliveries`), what a delivery does depends only on the
receiver's record, the sender, the message and the clock: the same inputs
give the same new record, the same effects written to the out-buffer, and
the same calls that change what the brokers share (the methods the shared
state lists in `writes`). So the explorer runs each distinct local step once,
as every step runs, under the checked brokers (the step compared with the
model's, CLM-NET-6 and CLM-RCF-7, and the overlay checked after it). It keeps
what the step did, and at every later delivery with the same inputs applies
that instead (`BrokerHost.replay`): the checks of a local step read nothing
else, so they would pass again, and the overlay, which no delivery changes,
passed its check after the step that made the state.

A step is known by its receiver's record itself, by identity: a record is
never changed once its state is made (a later handler changes a copy,
`BrokerHost.own`), and the memo keeps every record it names alive, so an id
is never reused. States reached along different paths share their untouched
records, and a step the memo applies hands on the same record object each
time, so the same step recurs often (the report's `local_steps`).

Not memoized: a protocol that does not declare its deliveries local, a
payload that cannot be hashed, and every step while a census is being
taken (conformance/runner/census.py counts the rules each handler run fires).
"""

from __future__ import annotations

from typing import Any

import attrs

from subsum.conformance.runner import census
from subsum.conformance.schedules.runs import Run, filter_of


@attrs.frozen
class Known:
    """What one local step did: the receiver's record before it (kept alive: its id is the key) and after it, the
    effects its handler wrote, and the calls that changed what the brokers share, each (method, args)."""

    before: Any
    after: Any
    effects: tuple
    writes: tuple


class SharedWrites:
    """What the brokers share, as a handler sees it while its step is recorded: each call of a method the shared
    state lists in `writes` is kept, in order, and carried out; anything else is read through."""

    __slots__ = ("target", "names", "calls")

    def __init__(self, target: Any, names: tuple[str, ...]) -> None:
        self.target, self.names = target, names
        self.calls: list[tuple[str, tuple]] = []

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.target, name)
        if name not in self.names:
            return value

        def call(*args):
            self.calls.append((name, args))
            return value(*args)

        return call


@attrs.define
class LocalSteps:
    """The memo of one search: each distinct local step's `Known`, and how often a delivery was applied from it
    (`hits`), run and kept (`misses`) or run without it (`bypassed`)."""

    enabled: bool
    notifications: bool = False  # the brokers' overlay notifications are local too (`Broker.local_notifications`)
    steps: dict = attrs.field(factory=dict)
    filters: dict = attrs.field(factory=dict)  # a filter's text -> the filter (parsed once a search)
    hits: int = 0
    misses: int = 0
    bypassed: int = 0
    #: Under --jobs: the distinct steps the workers met after the fork, each counted by every worker that met it
    elsewhere: int = 0
    distinct_at_fork: int = 0

    @classmethod
    def for_run(cls, run: Run) -> LocalSteps:
        """A memo for the runs forked from `run`: on when its brokers declare their deliveries local and what they
        share names its `writes` (or they share nothing)."""
        net = run.net
        shared_ok = net.shared is None or hasattr(type(net.shared), "writes")
        enabled = bool(getattr(net.broker_class, "local_deliveries", False)) and shared_ok
        memo = cls(enabled, notifications=enabled and bool(getattr(net.broker_class, "local_notifications", False)))
        if memo.notifications:
            net.notifications = memo  # forks share it (`Network.fork` copies the attribute)
        return memo

    def notify(self, net, bid: int, method: str, args: tuple) -> bool:
        """Carry out the overlay notification `method(*args)` at broker `bid` (`BrokerHost.notify`): from the memo if
        the step is known, else run (checked, as every step) and kept. False: not done here (the caller runs it)."""
        if census.observing():
            return False
        try:
            key = (id(net.brokers[bid]), "notify", method, args, net.now)
            known = self.steps.get(key)
        except TypeError:  # an argument that cannot be hashed
            return False
        if known is not None:
            self.hits += 1
            for name, args_ in known.writes:
                getattr(net.shared, name)(*args_)
            net.replay(bid, method, known.after, known.effects, handled=False)
            return True
        self.misses += 1
        net.owned.discard(bid)  # the handler changes a copy: the record the key names stays as it is
        self._watch(net, bid, key, lambda: net.run_notification(bid, method, args))
        return True

    def deliver(self, run: Run, link: tuple, op: dict) -> None:
        """Deliver the head of `link` (the move's operation `op`), from the memo if the step is known."""
        net = run.net
        kind, payload = net.transport.head(link)
        if not self.enabled or census.observing():
            self.bypassed += 1
            run.apply(op)
            return
        try:
            key = self.key(net, link, kind, payload)
            known = self.steps.get(key)
        except TypeError:  # a payload that cannot be hashed
            self.bypassed += 1
            run.apply(op)
            return
        if known is None:
            self.misses += 1
            self._record(run, link[1], op, key)
            return
        self.hits += 1
        net.transport.take_head(link)
        for name, args in known.writes:
            getattr(net.shared, name)(*args)
        net.replay(link[1], kind, known.after, known.effects)
        run.check_step("deliver")

    def known(self, net, link: tuple) -> Known | None:
        """What delivering the head of `link` does, if the memo knows (and may be used now)."""
        if not self.enabled or census.observing():
            return None
        kind, payload = net.transport.head(link)
        try:
            return self.steps.get(self.key(net, link, kind, payload))
        except TypeError:
            return None

    def known_client(self, net, op: dict) -> Known | None:
        """What a client's subscribe or unsubscribe `op` does at its access broker, if the memo knows."""
        if not self.enabled or census.observing():
            return None
        return self.steps.get(self.client_key(net, op))

    @staticmethod
    def client_key(net, op: dict) -> tuple:
        """A client operation's local step: its access broker's record (by identity), the client, SUB or UNSUB, the
        filter's text and the clock."""
        return id(net.brokers[net.clients[op["client"]]]), op["client"], op["op"], op["filter"], net.now

    def filter(self, text: str) -> Any:
        """The filter a client operation names, parsed once a search."""
        f = self.filters.get(text)
        if f is None:
            f = self.filters[text] = filter_of(text)
        return f

    @staticmethod
    def key(net, link: tuple, kind: str, payload: Any) -> tuple:
        """What a local step's effect depends on: the receiver's record (by identity), the sender, the message and
        the clock (the settings are the search's). Looking it up raises TypeError for a payload that cannot be hashed."""
        return id(net.brokers[link[1]]), link[0], kind, payload, net.now

    def client_op(self, run: Run, op: dict) -> None:
        """A client's subscribe or unsubscribe (the move's operation `op`): its access broker's step from the memo
        if known (the client's filters noted as `Network.subscribe` notes them), else run and kept."""
        net, client = run.net, op["client"]
        if not self.enabled or census.observing():
            self.bypassed += 1
            run.apply(op)
            return
        broker, kind = net.clients[client], "SUB" if op["op"] == "subscribe" else "UNSUB"
        key = self.client_key(net, op)
        known = self.steps.get(key)
        if known is None:
            self.misses += 1
            self._record(run, broker, op, key)
            return
        self.hits += 1
        net.note_subscription(client, self.filter(op["filter"]), held=kind == "SUB")
        for name, args in known.writes:
            getattr(net.shared, name)(*args)
        net.replay(broker, kind, known.after, known.effects, handled=False)
        run.check_step(op["op"])

    @staticmethod
    def publish_key(net, op: dict) -> tuple:
        """A publication's local step at its access broker: the broker's record (by identity), the client, the event's
        id and attributes, and the clock."""
        return id(net.brokers[net.clients[op["client"]]]), op["client"], "publish", net._next_event, tuple(op["attributes"].items()), net.now

    def known_publish(self, run: Run, op: dict) -> Known | None:
        """What a publication `op` does at its access broker, if the memo knows and its family publishes locally now."""
        if not self.enabled or census.observing() or not run.family.publishes_locally(run.net, run.static):
            return None
        return self.steps.get(self.publish_key(run.net, op))

    def publish(self, run: Run, op: dict) -> None:
        """A publication (the move's operation `op`): where its family says the publication is only its access
        broker's step (not one it follows to its end and checks, CLM-NET-3), from the memo if known, else run and
        kept; otherwise run as every publication runs."""
        net, client = run.net, op["client"]
        if not self.enabled or census.observing() or not run.family.publishes_locally(net, run.static):
            self.bypassed += 1
            run.apply(op)
            return
        key = self.publish_key(net, op)
        known = self.steps.get(key)
        if known is None:
            self.misses += 1
            self._record(run, net.clients[client], op, key)
            return
        self.hits += 1
        eid = net._next_event
        net._next_event += 1
        net.ledger.published(eid)
        for name, args in known.writes:
            getattr(net.shared, name)(*args)
        net.replay(net.clients[client], "EVENT", known.after, known.effects, handled=False)
        run.check_step("publish")

    def _record(self, run: Run, dst: int, op: dict, key: tuple) -> None:
        """Run the step as every step runs (`Run.apply`: checked), and keep it (`_watch`)."""
        self._watch(run.net, dst, key, lambda: run.apply(op))

    def _watch(self, net, dst: int, key: tuple, step) -> None:
        """Run `step()`, watching what it writes and what it changes of the shared state; keep it unless a broker
        other than `dst` wrote something (then it was not local)."""
        before, shared = net.brokers[dst], net.shared
        recorder = SharedWrites(shared, tuple(getattr(type(shared), "writes", ())))
        journal: list[tuple] = []
        saved = net.journal
        net.journal, net.shared = journal, recorder  # the handlers' buffers (`new_out`) read the shared state here
        net.start_buffers()  # with a journal, a buffer the network applies when the handler returns
        try:
            step()
        finally:
            net.journal, net.shared = saved, shared
            net.start_buffers()
        written = [entry for entry in journal if entry[0] == "wrote"]
        if any(entry[1] != dst for entry in written):
            return
        net.owned.discard(dst)  # kept: from now on a handler changes a copy of it
        self.steps[key] = Known(before, net.brokers[dst], tuple(entry[2] for entry in written), tuple(recorder.calls))

    def report(self) -> dict:
        """The memo's part of the JSON report: local steps made, distinct, and the share applied from the memo."""
        made = self.hits + self.misses
        return {"memoized": self.enabled, "steps": made + self.bypassed, "distinct": len(self.steps) + self.elsewhere,
                "applied_from_memo": self.hits, "hit_rate": round(self.hits / made, 4) if made else 0.0}
