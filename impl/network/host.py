"""Hosting brokers as actors (spec/05-network.md DEF-NET-2): the network's
part that runs a broker's handler with an out-buffer and applies what the
handler wrote, sets and fires the brokers' timers, and answers what a handler
may read (`actor.Context`). `sim.Network` is a `BrokerHost` with an overlay,
clients and a workload's operations on top.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from subsum.impl.network.actor import AppliedOut, Out
from subsum.impl.network.overlay import NetworkError
from subsum.impl.network.protocol import Broker
from subsum.impl.network.timers import BrokerTimer, NetworkTimer, SharedTimer

if TYPE_CHECKING:
    from subsum.impl.network.accounting import Ledger
    from subsum.impl.network.overlay import Overlay
    from subsum.impl.network.transport import Timer, Transport


class BrokerHost:
    """The brokers, their handler runs and their timers. The subclass sets
    `transport`, `ledger`, `overlay`, `shared`, the timeouts and `options`."""

    transport: Transport
    ledger: Ledger
    overlay: Overlay
    shared: Any
    defer_timeout: float
    sub_timeout: float
    options: dict
    clients: dict[int, int]

    def __init__(self) -> None:
        self.brokers: dict[int, Broker] = {}
        #: message kind -> its handler, `function(broker, src, payload, out)`: every broker is of one class, the
        #: subclass's `broker_class` (`protocol.handler_table`)
        self.dispatch: dict[str, Any] = {}
        self.owned: set[int] = set()  # the brokers this network alone holds; the others it shares with a fork
        self._rids = 0
        self._incarnations = 0
        self.incarnation: dict[int, int] = {}  # broker -> which of the brokers ever given its id it is
        self.broker_timers: dict[tuple, int] = {}  # (broker, method, args) -> its pending timer's id
        #: The out-buffer `deliver` hands each message's handler (made once the shared state is: `start_buffers`)
        self.buffered = True  # whether handlers' effects wait in a buffer (see `new_out`); the subclass decides
        self.message_out = Out(None, None)
        #: None, or (see `keep_journal`) every message a broker handled and every effect a handler wrote, in order
        self.journal: list[tuple] | None = None
        #: None, or a checker's memo that may carry out an overlay notification it knows (`notify`)
        self.notifications: Any = None

    def start_buffers(self) -> None:
        """Make the out-buffer `deliver` reuses, once `shared` is set (and again for a fork, which has its own)."""
        self.message_out = self.new_out(None)

    def handler(self, dst: int, kind: str, src: int):
        """The function that handles a message of `kind` (see `dispatch`), or a NetworkError naming what is missing."""
        handler = self.dispatch.get(kind)
        if handler is None:
            cls = type(self.brokers[dst])
            raise NetworkError(f"broker {dst} runs {cls.__name__}, which has no handler for {kind} (from {src})")
        return handler

    def keep_journal(self) -> list[tuple]:
        """From now on, record in `journal` ("handled", src, dst, kind, payload) for each message a broker handles
        and ("wrote", broker, effect) for each effect a handler writes (`actor.Out`), in the order they happen:
        what a check reads to see what brokers did, off the same buffers the network applies."""
        self.journal = []
        self.start_buffers()
        return self.journal

    @property
    def now(self) -> float:
        return self.transport.now

    def host(self, bid: int, broker: Broker) -> None:
        """Take `broker` in as broker `bid`, a new incarnation of that id."""
        self.brokers[bid] = broker
        self.owned.add(bid)
        self._incarnations += 1
        self.incarnation[bid] = self._incarnations

    def own(self, bid: int) -> Broker:
        """Broker `bid`'s state, copied first if this network shares it with a fork (copy on write)."""
        broker = self.brokers[bid] = self.brokers[bid].copy()
        self.owned.add(bid)
        return broker

    def run_timer(self, callback: Timer) -> None:
        """How the transport runs a timer: the network's own with this network, any other as it is."""
        if isinstance(callback, NetworkTimer):
            callback.run(self)
        else:
            callback()

    def unhost(self, bid: int) -> Broker:
        """Broker `bid` is gone: it runs no handler any more, and its pending timers will fire as steps that do
        nothing (they stay in the transport, so that the steps of a run do not depend on who crashed)."""
        for key in [key for key in self.broker_timers if key[0] == bid]:
            del self.broker_timers[key]
        self.owned.discard(bid)
        return self.brokers.pop(bid)

    def setting(self, name: str):
        """A setting a handler may read (`actor.Context`): defer_timeout, sub_timeout, options or record_crossings."""
        if name == "record_crossings":
            return self.ledger.record_crossings
        if name not in ("defer_timeout", "sub_timeout", "options"):
            raise NetworkError(f"no network setting {name!r}; there are defer_timeout, sub_timeout, options and record_crossings")
        return getattr(self, name)

    def broker_ids(self):
        return self.brokers.keys()

    # --- handlers and their out-buffers (DEF-NET-2) ------------------------------------------
    def apply(self, out: Out) -> None:
        """Carry out what a handler wrote to its out-buffer, in order."""
        src = cast(int, out.bid)  # None only for a shared clock, which only sets timers
        if self.journal is not None:
            self.journal.extend(("wrote", src, effect) for effect in out.effects)
        for effect in out.effects:
            self.apply_effect(src, effect)

    def apply_effect(self, src: int, effect: tuple) -> None:
        """Carry out one effect broker `src`'s handler wrote (`actor.Out`)."""
        what, transport = effect[0], self.transport
        if what == "route":  # the commonest first: an event handed on
            transport.route(src, effect[1], effect[2])
        elif what == "send":
            transport.send(src, effect[1], effect[2], effect[3])
        elif what == "direct":
            transport.send_many(src, (effect[1],), effect[2], effect[3], channel="oob")
        elif what == "timer":
            self._set_timer(src, *effect[1:])
        elif what == "cancel":
            timer = self.broker_timers.pop((src, effect[1], effect[2]), None)
            if timer is not None:
                transport.cancel(timer)
        elif what == "count":
            getattr(self.ledger, effect[1])[effect[2]] += effect[3]
        elif what == "shared-timer":
            transport.at(effect[1], SharedTimer(effect[2], effect[3]))
        else:  # every-broker
            for b in sorted(self.brokers):
                self.notify(b, effect[1], *effect[2])

    def new_out(self, bid: int | None) -> Out:
        """An out-buffer for a handler run at broker `bid`: one the network applies as each effect is written,
        unless something reads the buffers (a check's broker class, `reads_out_buffer`, or the journal)."""
        return Out(bid, self) if self.buffered or self.journal is not None else AppliedOut(bid, self)

    def _set_timer(self, bid: int, at: float, method: str, args: tuple, defers: bool) -> None:
        key = (bid, method, args)
        if key in self.broker_timers:
            raise NetworkError(f"broker {bid} set the timer {method}{args} twice")
        if defers:
            self.ledger.timers_started[bid] += 1
        timer = BrokerTimer(bid, self.incarnation[bid], method, args)
        timer.tid = self.broker_timers[key] = self.transport.at(at, timer)

    def notify(self, bid: int, method: str, *args) -> None:
        """Run `broker.method(*args, out)` now (an overlay notification) and apply its out-buffer; or let the
        checker's memo of notifications (`notifications`, None but under `subsum explore`) do it, if it knows the
        step already or records it (spec/12 DEF-EXP-7)."""
        memo = self.notifications
        if memo is not None and memo.notify(self, bid, method, args):
            return
        self.run_notification(bid, method, args)

    def run_notification(self, bid: int, method: str, args: tuple) -> None:
        """Run the notification `broker.method(*args, out)` and apply its out-buffer."""
        out = self.new_out(bid)
        getattr(self.brokers[bid] if bid in self.owned else self.own(bid), method)(*args, out)
        self.apply(out)

    # --- messages --------------------------------------------------------------------------
    def deliver(self, src: int, dst: int, kind: str, payload) -> None:
        """A message arrives at broker dst: count it, run dst's handler and apply what it wrote."""
        self.ledger.handled[kind] += 1
        if self.journal is not None:
            self.journal.append(("handled", src, dst, kind, payload))
        out = self.message_out  # one buffer for every message: a handler's run never delivers another message
        out.bid = dst
        effects = out.effects
        if effects:
            effects.clear()  # left by a handler that raised
        handler = self.dispatch.get(kind) or self.handler(dst, kind, src)
        handler(self.brokers[dst] if dst in self.owned else self.own(dst), src, payload, out)
        if effects:  # a buffer, not applied as written
            self.apply(out)
            effects.clear()

    def replay(self, dst: int, kind: str, record: Broker, effects: tuple, handled: bool = True) -> None:
        """A message arrives at broker dst whose handler run is known already (a checker's memo of local steps,
        spec/12 DEF-EXP-7): `record` is dst's record after it, shared (this network does not own it, so a later
        handler copies it first), and `effects` what the handler wrote. What `deliver` does, without the run;
        `handled` False for a client's message, which no link carried (`deliver_from_client`)."""
        if handled:
            self.ledger.handled[kind] += 1
        self.brokers[dst] = record
        self.owned.discard(dst)
        for effect in effects:
            self.apply_effect(dst, effect)

    def is_broker(self, node: int) -> bool:
        return node in self.brokers

    def to_client(self, src: int, client: int, kind: str, payload) -> None:
        """A message other than EVENT from broker src to a client: a violation
        (the transport delivers EVENTs itself)."""
        self.ledger.violations[f"{kind} to a client"] += 1

    def send(self, src: int, dst: int, kind: str, payload) -> None:
        """A message over the tree link (src, dst), put there from outside any handler (a scenario's stray FLUSH)."""
        self.transport.send(src, dst, kind, payload)

    def at(self, t: float, callback: Timer) -> int:
        """Run `callback` at simulated time t (a workload's or a test's timer; a broker sets its own with
        `out.timer`); returns the timer's id."""
        return self.transport.at(t, callback)

    def run(self, max_steps: int | None = None) -> int:
        """Run the transport's event loop (see `Transport.run`)."""
        return self.transport.run(max_steps)

    def new_rid(self) -> int:
        """A fresh reconfiguration id."""
        self._rids += 1
        return self._rids

    def deliver_from_client(self, client: int, kind: str, payload) -> None:
        """A client's operation reaches its access broker at once (not counted as handled: no link carried it)."""
        broker = self.clients[client]
        out = self.new_out(broker)
        self.handler(broker, kind, client)(self.brokers[broker] if broker in self.owned else self.own(broker), client, payload, out)
        self.apply(out)

