"""CLM-SUM-11: owners and a remote history under churn (the
`SummariesUnderChurn` state machine), and the regressions it found."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from subsum.conformance.runner.profiles import pinned
from subsum.conformance import strategies as gen
from subsum.conformance.checks.summaries.structure import check_structure
from subsum.conformance.checks.summaries.views import check_same_rows, impl_rows, model_rows
from subsum.core.filters import parse_filter
from subsum.core.types import Attribute, Event, Subscription
from subsum.impl.summary import IdLayout, OwnerSummary
from subsum.impl.summary.history import Directory, History
from subsum.model.summaries import summary as ref
from subsum.model.semantics import matching_ids

# --- CLM-SUM-11: state machine ----------------------------------------------------------------

SCHEMA = (("b", "bool"), ("s", "string"), ("t", "string"), ("x", "int"), ("y", "float"))


class SummariesUnderChurn(RuleBasedStateMachine):
    """Three owner brokers add and remove subscriptions and ship their deltas
    one broker at a time (so deletions reach the history late, and rebuilds
    ask owners about IDs they already dropped); a remote broker's history
    applies the deltas and rebuilds rows through the owners (method 1).
    After every step: each owner's rows equal the reference built from its
    active subscriptions (numeric exactly, string constraints) and the
    structures hold at the owners and at the history. At every publish: the
    history has no false negatives for the subscriptions shipped and still
    active, and with the owners' re-check it delivers exactly those that match."""

    def __init__(self) -> None:
        super().__init__()
        self.layout = IdLayout(3, 8, len(SCHEMA))  # few slots, so slots are reused
        self.owners = [OwnerSummary(b, self.layout, SCHEMA) for b in range(3)]
        self.history = History(self.layout, SCHEMA)
        self.active: dict[str, tuple[int, Subscription]] = {}
        self.shipped: list[dict[int, tuple[str, dict]]] = [{}, {}, {}]  # per broker: ID -> (name, abstraction)
        self.counter = 0

    @precondition(lambda self: len(self.active) < 20)
    @rule(broker=st.integers(0, 2), subscription=gen.summary_subscriptions())
    def subscribe(self, broker, subscription):
        if len(self.owners[broker].by_name) + len(self.owners[broker]._released) >= self.layout.max_subscriptions:
            return  # the broker's c2 field is full (its freed slots wait for the next delta)
        name = f"s{self.counter}"
        self.counter += 1
        self.owners[broker].add(name, subscription)
        self.active[name] = (broker, subscription)

    @precondition(lambda self: self.active)
    @rule(data=st.data())
    def unsubscribe(self, data):
        name = data.draw(st.sampled_from(sorted(self.active)))
        broker, _ = self.active.pop(name)
        self.owners[broker].remove(name)

    @rule(broker=st.integers(0, 2))
    def propagate(self, broker):
        owner = self.owners[broker]
        self.history.apply(owner.take_delta(), Directory(self.owners).resolve)
        self.shipped[broker] = {sid: (owner.names[sid], dict(a)) for sid, a in owner.abstractions.items()}

    def _live(self) -> dict[int, str]:
        """Shipped IDs whose subscription is still active: what must be delivered."""
        return {sid: name for shipped in self.shipped for sid, (name, _) in shipped.items() if name in self.active}

    @rule(data=st.data())
    def publish(self, data):
        live = self._live()
        subscriptions = {name: self.active[name][1] for name in live.values()}
        source = data.draw(st.sampled_from(sorted(subscriptions))) if subscriptions else None
        event = data.draw(gen.summary_event_for(subscriptions[source] if source else Subscription()))
        exact = set(matching_ids(sorted(subscriptions.items()), event))
        candidates = self.history.match(event)
        got = {live[i] for i in candidates if i in live}
        assert exact <= got, f"false negative {sorted(exact - got)} for {event}"
        delivered = set()
        for owner in self.owners:
            mine = {i for i in candidates if self.layout.broker_of(i) == owner.broker}
            delivered |= {owner.names[i] for i in owner.recheck(event, mine)}
        assert delivered == exact, (delivered, exact)

    @invariant()
    def owners_equal_reference(self):
        for owner in self.owners:
            mine = [(name, s) for name, (b, s) in sorted(self.active.items(), key=lambda kv: int(kv[0][1:])) if b == owner.broker]
            check_same_rows(impl_rows(owner.export()), model_rows(ref.reference_summary(mine)), owner.broker)
            check_structure(owner.export(), owner.abstractions)

    @invariant()
    def history_structure(self):
        members = {sid: {k: n for k, n in a.items() if (sid, k) not in self.history.retired}
                   for shipped in self.shipped for sid, (_, a) in shipped.items()}
        check_structure(self.history, members)


def run_summaries_state_machine() -> None:
    run_state_machine_as_test(pinned(SummariesUnderChurn), settings=settings(stateful_step_count=40))


def history_survives_slot_reuse_and_late_deletions() -> None:
    """CLM-SUM-11 regressions: (1) a slot freed and reused before the next
    delta, (2) two deletions of one row in one delta, (3) a rebuild asking
    another broker about an ID it deleted but has not shipped yet."""
    schema = (("s", "string"), ("x", "int"))
    layout = IdLayout(3, 8, 2)

    def one(text):
        return Subscription(frozenset(parse_filter(text).constraints))

    # (1) A deleted, B added in its place before the delta: B must be found.
    o = OwnerSummary(0, layout, schema)
    h = History(layout, schema)
    o.add("A", one('s = "zzz"'))
    h.apply(o.take_delta(), Directory([o]).resolve)
    o.remove("A")
    o.add("B", one('s = "aaa"'))
    h.apply(o.take_delta(), Directory([o]).resolve)
    assert h.match(Event((Attribute("s", "string", "aaa"),))) == {o.by_name["B"]}
    assert impl_rows(h, o.names) == impl_rows(o.export())
    # (2) x = 0 and x < 0 share a row; both deleted in one delta.
    o = OwnerSummary(0, layout, schema)
    h = History(layout, schema)
    o.add("s0", one("x = 0"))
    o.add("s1", one("x < 0"))
    h.apply(o.take_delta(), Directory([o]).resolve)
    o.remove("s1")
    o.remove("s0")
    h.apply(o.take_delta(), Directory([o]).resolve)
    assert h.rows() == {} and not h.retired
    # (3) broker 0 holds x <= 5, broker 1 x = 3; both delete; 0's delta first.
    owners = [OwnerSummary(b, layout, schema) for b in range(2)]
    h = History(layout, schema)
    owners[0].add("a", one("x <= 5"))
    owners[1].add("b", one("x = 3"))
    owners[1].add("c", one("x = 4"))
    for o in owners:
        h.apply(o.take_delta(), Directory(owners).resolve)
    owners[1].remove("b")
    owners[0].remove("a")
    h.apply(owners[0].take_delta(), Directory(owners).resolve)
    assert h.rows()[("x", "int")] == [("equality", (4, 4), frozenset({owners[1].by_name["c"]}))], h.rows()
    h.apply(owners[1].take_delta(), Directory(owners).resolve)
    assert h.rows()[("x", "int")] == [("equality", (4, 4), frozenset({owners[1].by_name["c"]}))] and not h.retired
