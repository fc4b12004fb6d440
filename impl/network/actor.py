"""What a broker's handler does, as data (spec/05-network.md DEF-NET-2): the
out-buffer.

A handler runs as `broker.handler(src, payload, out)`. It changes its own
broker's record and writes everything else it does to `out`, in order:

- `out.send(dst, kind, payload)`: a message over the tree link to dst;
- `out.send_direct(dst, kind, payload)`: out of band (REDS's UDP);
- `out.route_event(targets, publication)`: a publication to each target, a
  client target being a delivery;
- `out.timer(at, method, *args)`: run `broker.method(*args, out)` at
  simulated time `at` (if the broker is still there); `out.cancel(method,
  *args)` takes such a timer back;
- `out.count(counter, key, n)`: add to one of the ledger's counters;
- `out.shared_timer(at, method, *args)` and `out.tell_every_broker(method,
  *args)`: a clock of the whole network (the summaries' rounds) and its tick
  at every broker.

The network applies the buffer when the handler returns: it enqueues the
messages on their links, sets and cancels the timers and counts, in the
order they were written, so a handler's effects are the same as if each
had happened at once. A check reads the same buffer (`out.effects`) to
compare what a handler did with what the model says it must do. Where
nothing reads the buffers, the network hands out an `AppliedOut`, which
carries out each effect as it is written: the same order, so the same run.

What a handler may read of the world is here too, read-only: the time
(`now`), the network's settings (`setting(name)`), what the network's brokers
share (`shared`), the overlay (`overlay`: a broker protocol may know the
topology, as the seeds' do) and the brokers' ids (`brokers`).

>>> out = Out(0, context=None)
>>> out.send(1, "SUB", "f"); out.route_event([1_000_000], "p"); out.timer(5.0, "expired", 3)
>>> out.effects
[('send', 1, 'SUB', 'f'), ('route', [1000000], 'p'), ('timer', 5.0, 'expired', (3,), False)]
>>> out.messages()
[(1, 'SUB', 'f')]
"""

from __future__ import annotations

from typing import Any, Iterable, Protocol


class Context(Protocol):
    """What a handler may read of its network (`sim.Network` is one)."""

    @property
    def now(self) -> float: ...

    @property
    def shared(self) -> Any: ...

    @property
    def overlay(self) -> Any: ...

    def setting(self, name: str) -> Any: ...

    def broker_ids(self) -> Iterable[int]: ...

    def new_rid(self) -> int: ...


class Out:
    """The effects of one handler run at broker `bid`, in the order written."""

    __slots__ = ("bid", "context", "shared", "effects")

    def __init__(self, bid: int | None, context: Context | None) -> None:
        """`bid`: the broker whose handler runs (None for a shared clock's tick, which sends nothing itself)."""
        self.bid = bid
        self.context = context
        #: What the network's brokers share (`Broker.shared_state`), read by handlers on their hottest paths.
        self.shared: Any = None if context is None else context.shared
        self.effects: list[tuple] = []

    # --- what a handler does ----------------------------------------------------------------
    def send(self, dst: int, kind: str, payload) -> None:
        """A message over the tree link (bid, dst)."""
        self.effects.append(("send", dst, kind, payload))

    def send_direct(self, dst: int, kind: str, payload) -> None:
        """A message out of band: no link needed (ACTIVATE, the summaries' ROUTE, the baselines' messages)."""
        self.effects.append(("direct", dst, kind, payload))

    def route_event(self, targets: list[int], publication) -> None:
        """The publication (a `messages.Publication`) to each target: a client's is a delivery, a broker's an EVENT."""
        self.effects.append(("route", targets, publication))

    def timer(self, at: float, method: str, *args, defers: bool = False) -> None:
        """Run `method(*args, out)` on this broker at simulated time `at`, unless it crashed or left meanwhile.
        `defers`: a deferred-unsubscription timer, which the ledger counts (`timers_started`, CLM-RCF-4)."""
        self.effects.append(("timer", at, method, args, defers))

    def cancel(self, method: str, *args) -> None:
        """Take back this broker's pending timer `method(*args)` (nothing if it has fired)."""
        self.effects.append(("cancel", method, args))

    def shared_timer(self, at: float, method: str, *args) -> None:
        """Run `method(*args, out)` on what the brokers share (`shared`) at simulated time `at`: a clock of the
        whole network, such as the summaries' rounds, which no broker's crash stops."""
        self.effects.append(("shared-timer", at, method, args))

    def tell_every_broker(self, method: str, *args) -> None:
        """Run `method(*args, out)` on every broker, in id order, each with an out-buffer of its own (what a
        shared clock does when it ticks)."""
        self.effects.append(("every-broker", method, args))

    def count(self, counter: str, key: str, n: int = 1) -> None:
        """Add n to the ledger's `counter` (violations, overlay_hops, payload_bytes) under `key`."""
        self.effects.append(("count", counter, key, n))

    # --- what a handler may read -------------------------------------------------------------
    @property
    def now(self) -> float:
        return self.context.now  # type: ignore[union-attr]

    @property
    def overlay(self) -> Any:
        """The broker forest, to read (`overlay.Overlay`)."""
        return self.context.overlay  # type: ignore[union-attr]

    def setting(self, name: str) -> Any:
        """A network setting: `defer_timeout`, `sub_timeout`, `options` (the protocol's own) or `record_crossings`."""
        return self.context.setting(name)  # type: ignore[union-attr]

    def brokers(self) -> list[int]:
        """The live brokers' ids, ascending."""
        return sorted(self.context.broker_ids())  # type: ignore[union-attr]

    def new_rid(self) -> int:
        """A fresh reconfiguration id (for a removal no reconfiguration named)."""
        return self.context.new_rid()  # type: ignore[union-attr]

    # --- what a check reads ------------------------------------------------------------------
    def messages(self, since: int = 0) -> list[tuple[int, str, Any]]:
        """The tree messages written from effect `since` on, as (dst, kind, payload)."""
        return [(e[1], e[2], e[3]) for e in self.effects[since:] if e[0] == "send"]

    def routed(self, since: int = 0) -> set[int]:
        """The targets of the publications routed from effect `since` on."""
        return {t for e in self.effects[since:] if e[0] == "route" for t in e[1]}

    def timers_set(self, since: int = 0) -> list[tuple]:
        """The timers set from effect `since` on, as (at, method, args, defers)."""
        return [e[1:] for e in self.effects[since:] if e[0] == "timer"]


class AppliedOut(Out):
    """An out-buffer whose effects the network carries out as they are written, keeping none: what a network
    gives its handlers when nothing reads the buffers (the simulator's runs; a check's brokers get a plain `Out`).
    The network would apply a buffer in the order it was written, so this is the same run, without the buffer."""

    __slots__ = ("send_many", "route", "send_one")

    def __init__(self, bid: int | None, host) -> None:
        super().__init__(bid, host)
        transport = host.transport
        self.send_many, self.route, self.send_one = transport.send_many, transport.route, transport.send

    def send(self, dst: int, kind: str, payload) -> None:
        self.send_one(self.bid, dst, kind, payload)

    def send_direct(self, dst: int, kind: str, payload) -> None:
        self.send_many(self.bid, (dst,), kind, payload, "oob")

    def route_event(self, targets: list[int], publication) -> None:
        self.route(self.bid, targets, publication)

    def timer(self, at: float, method: str, *args, defers: bool = False) -> None:
        self.context.apply_effect(self.bid, ("timer", at, method, args, defers))  # type: ignore[union-attr]

    def cancel(self, method: str, *args) -> None:
        self.context.apply_effect(self.bid, ("cancel", method, args))  # type: ignore[union-attr]

    def count(self, counter: str, key: str, n: int = 1) -> None:
        self.context.apply_effect(self.bid, ("count", counter, key, n))  # type: ignore[union-attr]

    def shared_timer(self, at: float, method: str, *args) -> None:
        self.context.apply_effect(self.bid, ("shared-timer", at, method, args))  # type: ignore[union-attr]

    def tell_every_broker(self, method: str, *args) -> None:
        self.context.apply_effect(self.bid, ("every-broker", method, args))  # type: ignore[union-attr]
