"""Brokers that check every step against the model's (the differential
checks of spec/05 and spec/06): a checked broker runs the model's step from
the same state beside each of its own and compares the new table and the
messages sent.

- `CheckedBroker`: Strawman's handlers against the model's plain handlers
  (CLM-NET-6), nothing but EVENTs to a client (CLM-NET-4), and which rule of
  DEF-NET-6/7 fired (a census tag);
- `ProtocolChecks`, `InformedChecks`: the deferred and informed protocols'
  steps against subsum.model.reconfiguration (CLM-RCF-7), leaf brokers start
  no timer (CLM-RCF-4), a FLUSH a broker holds no task for is only passed on
  (CLM-RCF-5);
- `checked_class(protocol)`: the protocol's broker class with those checks
  mixed in (the fuzzer's and the reconfiguration machines' brokers).
"""

from __future__ import annotations

import functools
from collections import Counter

from subsum.conformance.runner import census
from subsum.conformance.schedules.declared import ran
from subsum.conformance.runner.violations import listed, require, shown
from subsum.core.types import Subscription
from subsum.impl.network import CLIENT_BASE, NetworkError, StrawmanBroker, broker_class_for, is_forwarding
from subsum.impl.network.actor import Out
from subsum.impl.network.protocols.deferred import TimedBroker
from subsum.impl.network.protocols.informed import InformedBroker
from subsum.model import reconfiguration as ref_reconfiguration
from subsum.model import strawman as ref_strawman


def model_view(broker: StrawmanBroker) -> ref_strawman.BrokerState:
    return ref_strawman.BrokerState(broker.id, frozenset(broker.neighbors),
                                    frozenset([m for m in broker.neighbors if m >= CLIENT_BASE]), frozenset(broker.entries()))


def sub_rule(state: ref_strawman.BrokerState, n: int, p: Subscription) -> str:
    """Which rule of DEF-NET-6 a SUB(p) from n fires at this state (a census tag)."""
    if n not in state.neighbors:
        return "SUB:stale"
    if (n, p) in state.table:
        return "SUB:repeat"
    before = ref_strawman.subscribers_of(state, p)
    if not before:
        return "SUB:first"
    if len(before) == 1:
        return "SUB:second-to-broker" if before <= ref_strawman.broker_neighbors(state) else "SUB:second-to-client"
    return "SUB:later"


def unsub_rule(state: ref_strawman.BrokerState, n: int, p: Subscription) -> str:
    """Which rule of DEF-NET-6 an UNSUB(p) from n fires at this state (a census tag)."""
    if (n, p) not in state.table:
        return "UNSUB:stale"
    remaining = ref_strawman.subscribers_of(state, p) - {n}
    if not remaining:
        return "UNSUB:last"
    if len(remaining) == 1:
        return "UNSUB:single-remaining-broker" if remaining <= ref_strawman.broker_neighbors(state) else "UNSUB:single-remaining-client"
    return "UNSUB:several-remaining"


def check_no_control_message_to_a_client(sender: int, sent: list) -> None:
    """CLM-NET-4, read off the messages a broker hands the simulator (not its counter)."""
    to_clients = [(dst, kind) for dst, kind, _ in sent if dst >= CLIENT_BASE and kind != "EVENT"]
    require(not to_clients, "CLM-NET-4", lambda: f"broker {sender} addressed {to_clients} to clients")


def sent_by(out: Out, sender: int, run) -> list:
    """Run `run()` and return the tree messages it wrote to `out`, as (dst, kind, payload), after checking that none
    went to a client (CLM-NET-4: read off the buffer a broker hands the network, not off the network's counter)."""
    mark = len(out.effects)
    run()
    sent = out.messages(mark)
    check_no_control_message_to_a_client(sender, sent)
    return sent


def same_messages(got: list, want: list) -> bool:
    """The same messages, counted as multisets (the handlers iterate sets);
    by their text when a payload cannot be hashed."""
    if len(got) != len(want):
        return False
    if len(got) < 2:
        return got == want
    try:
        return Counter(got) == Counter(want)
    except TypeError:
        return Counter(map(shown, got)) == Counter(map(shown, want))


# --- CLM-NET-6: Strawman's handlers ------------------------------------------------------------

class CheckedBroker(StrawmanBroker):
    """A broker that runs the model's handler beside each of its own, from
    the same state, and compares the new table and the messages it wrote to
    its out-buffer (as a multiset: the handlers iterate sets). It also checks
    that nothing but EVENTs goes to a client (CLM-NET-4), and records which
    rule fired (conformance/runner/census.py). Its own handlers are the next class's
    in the MRO: Strawman's here, a plug-in's in `checked_class(X)`, whose MRO
    puts this class before X (below)."""

    reads_out_buffer = True  # each step's buffer is compared with the model's messages

    def _compare(self, what: str, model_step, run, out: Out, before: ref_strawman.BrokerState | None = None) -> None:
        """`before`: the broker's model view now, if the caller has it (it is taken once per step)."""
        want_state, want_messages = model_step(model_view(self) if before is None else before)
        sent = sent_by(out, self.id, run)
        got = model_view(self)
        ran("broker-steps")
        require(got.table == want_state.table, "CLM-NET-6",
                lambda: f"broker {self.id} {what}: table {listed(got.table ^ want_state.table, 4)} differs from the model")
        require(got.neighbors == want_state.neighbors, "CLM-NET-6", lambda: f"broker {self.id} {what}: neighbors differ from the model")
        require(same_messages(sent, want_messages), "CLM-NET-6",
                lambda: f"broker {self.id} {what}: sent {listed(sent)}, the model sends {listed(want_messages)}")

    def sub_received(self, n, f, out):
        before = model_view(self)
        census.record(sub_rule(before, n, f))
        self._compare(f"SUB from {n}", lambda s: ref_strawman.on_sub(s, n, f), lambda: super(CheckedBroker, self).sub_received(n, f, out),
                      out, before)

    def unsub_received(self, n, f, out):
        before = model_view(self)
        census.record(unsub_rule(before, n, f))
        self._compare(f"UNSUB from {n}", lambda s: ref_strawman.on_unsub(s, n, f),
                      lambda: super(CheckedBroker, self).unsub_received(n, f, out), out, before)

    def remove_link_to(self, n, out):
        census.record("REMOVE-LINK:with-entries" if any(m == n for m, _ in self.entries()) else "REMOVE-LINK:no-entries")
        self._compare(f"removeLinkTo({n})", lambda s: ref_strawman.on_remove_link(s, n),
                      lambda: super(CheckedBroker, self).remove_link_to(n, out), out)

    def add_link_to(self, n, out):
        census.record("ADD-LINK:client" if n >= CLIENT_BASE else "ADD-LINK:broker")
        self._compare(f"addLinkTo({n})", lambda s: ref_strawman.on_add_link(s, n, n >= CLIENT_BASE),
                      lambda: super(CheckedBroker, self).add_link_to(n, out), out)

    def event_received(self, n, publication, out):
        want = ref_strawman.event_targets(model_view(self), n, publication.event)
        census.record("EVENT:forwarded" if want else "EVENT:dropped")
        mark = len(out.effects)
        super().event_received(n, publication, out)
        targets = out.routed(mark)
        ran("broker-steps")
        require(targets == want, "CLM-NET-6", lambda: f"broker {self.id} EVENT from {n}: forwarded to {sorted(targets)}, the model to {sorted(want)}")


# --- CLM-RCF-4, 5, 7: the reconfiguration protocols' steps -------------------------------------

class ProtocolChecks:
    """Mixin over a protocol broker class (with `CheckedBroker` in between):
    every protocol step is compared with the model's (CLM-RCF-7)."""

    def manage_removed_link(self, n, rid, out):
        if out.setting("defer_timeout") <= 0:
            census.record("TIMED:timeout-zero")
            super().manage_removed_link(n, rid, out)  # Strawman's removeLinkTo, checked by CheckedBroker
            return
        state = model_view(self)
        census.record("TIMED:leaf-no-timer" if ref_reconfiguration.is_leaf_without(state, n) else "TIMED:deferred")
        want_state, want_deferred = ref_reconfiguration.deferred_removal(state, n)
        waiting_before = set(self.waiting.get(rid, ()))
        mark = len(out.effects)
        sent = sent_by(out, self.id, lambda: super(ProtocolChecks, self).manage_removed_link(n, rid, out))
        got = model_view(self)
        ran("reconfiguration-steps")
        require(not sent, "CLM-RCF-7", lambda: f"broker {self.id} sent {sent} while deferring the link to {n}")
        require(got.table == want_state.table and got.neighbors == want_state.neighbors, "CLM-RCF-7",
                lambda: f"broker {self.id} deferring the link to {n}: table differs from the model")
        deferred = set(self.waiting.get(rid, ())) - waiting_before
        require(deferred == set(want_deferred), "CLM-RCF-7",
                lambda: f"broker {self.id} deferred {listed(deferred)}, the model {listed(want_deferred)}")
        if ref_reconfiguration.is_leaf_without(state, n):
            started = [t for t in out.timers_set(mark) if t[3]]
            ran("leaf-timers")
            require(not started, "CLM-RCF-4", lambda: f"leaf broker {self.id} started a timer when its link to {n} broke")

    def unsub_timer_expired(self, rid, out):
        census.record("TIMED:timer-expired")
        state, want = model_view(self), []
        for n, p in self.waiting.get(rid, ()):
            state, sent = ref_reconfiguration.deferred_unsubscribe(state, n, p)
            want += sent
        sent = sent_by(out, self.id, lambda: super(ProtocolChecks, self).unsub_timer_expired(rid, out))
        got = model_view(self)
        ran("reconfiguration-steps")
        require(got.table == state.table, "CLM-RCF-7", lambda: f"broker {self.id} deferred UNSUBs of {rid}: table differs from the model")
        require(same_messages(sent, want), "CLM-RCF-7",
                lambda: f"broker {self.id} deferred UNSUBs of {rid}: sent {listed(sent)}, the model sends {listed(want)}")

    def flush_received(self, m, rid, out):
        if rid in self.unsub_timers:
            census.record("FLUSH:acted-on")
            super().flush_received(m, rid, out)  # acted on: the deferred UNSUBs, checked above
            return
        census.record("FLUSH:passed-on")
        state = model_view(self)
        sent = sent_by(out, self.id, lambda: super(ProtocolChecks, self).flush_received(m, rid, out))
        ran("flushes")
        require(model_view(self).table == state.table, "CLM-RCF-5",
                lambda: f"broker {self.id} changed its table on FLUSH({rid}) it holds no task for")
        want = [(k, "FLUSH", rid) for k in ref_reconfiguration.flush_forward(state, m)]
        require(same_messages(sent, want), "CLM-RCF-5", lambda: f"broker {self.id} passed FLUSH({rid}) from {m} on as {sent}, expected {want}")


class InformedChecks(ProtocolChecks):
    """The informed steps against the model: P, the activation, the release."""

    def explore_view(self):
        """The informed broker's view and what this check expects of the next ACTIVATE (P and the filters announced,
        taken at the link's removal): a later step's check reads it, so it tells states apart too."""
        return super().explore_view(), getattr(self, "_expect", None)

    def link_removed(self, o, rid, replacement, out):
        if rid is not None and replacement is not None:
            state = model_view(self)
            self._expect = (ref_reconfiguration.only_subscribed_by(state, o), ref_reconfiguration.announced_to(state, o))
        super().link_removed(o, rid, replacement, out)

    def activate_received(self, m, activation, out):
        held = activation.held
        census.record("ACTIVATE:received")
        expected = getattr(self, "_expect", None)
        if m == self.id and expected is not None:
            ran("reconfiguration-steps")
            require(held == expected[0], "CLM-RCF-7",
                    lambda: f"broker {self.id} computed P = {listed(held)}, the model {listed(expected[0])}")
        super().activate_received(m, activation, out)

    def activate(self, rid, held, n, out):
        want, want_held = ref_reconfiguration.activation(model_view(self), n, held)
        census.record("ACTIVATE:holds-back" if want_held else "ACTIVATE:holds-nothing")
        sent = sent_by(out, self.id, lambda: super(InformedChecks, self).activate(rid, held, n, out))
        ran("reconfiguration-steps")
        require(same_messages(sent, want + [(n, "FLUSH", rid)]), "CLM-RCF-7",
                lambda: f"broker {self.id} activating the link to {n}: sent {listed(sent)}, the model {listed(want)} and FLUSH")
        got_held = frozenset(self.tagged[rid][1]) if rid in self.tagged else frozenset()
        require(got_held == want_held, "CLM-RCF-7",
                lambda: f"broker {self.id} held back {listed(got_held)}, the model {listed(want_held)}")

    def sub_timer_expired(self, rid, out):
        n, tagged = self.tagged[rid]
        census.record("INFORMED:sub-timer-expired")
        want = ref_reconfiguration.released(model_view(self), n, frozenset(tagged))
        sent = sent_by(out, self.id, lambda: super(InformedChecks, self).sub_timer_expired(rid, out))
        ran("reconfiguration-steps")
        require(same_messages(sent, want), "CLM-RCF-7",
                lambda: f"broker {self.id} released {listed(sent)} to {n}, the model {listed(want)}")


def checked_class(protocol: str) -> type:
    """The protocol's broker class with every step checked against the model.
    `protocol` is a registered name or a plug-in (`broker_class_for`); it must
    be of the subscription-forwarding family (`is_forwarding`). A Strawman
    subclass gets the Strawman handler checks (CLM-NET-6); a subclass of the
    timed, notified or informed broker also gets that protocol's checks."""
    base = broker_class_for(protocol)
    if not is_forwarding(base):
        raise NetworkError(f"protocol {protocol!r} ({base.__qualname__}) is not of the subscription-forwarding family whose "
                           "steps the model describes: subclass subsum.impl.network.StrawmanBroker (or TimedBroker, NotifiedBroker, "
                           "InformedBroker) and keep its `table`")
    return _checked(base)


@functools.cache
def _checked(base: type) -> type:
    if base is StrawmanBroker:
        return CheckedBroker
    if issubclass(base, InformedBroker):
        return type(f"Checked{base.__name__}", (InformedChecks, CheckedBroker, base), {})
    if issubclass(base, TimedBroker):
        return type(f"Checked{base.__name__}", (ProtocolChecks, CheckedBroker, base), {})
    return type(f"Checked{base.__name__}", (CheckedBroker, base), {})
