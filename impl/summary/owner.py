"""The owning broker's side of its summary (seed 000 §4.2.4, §4.3.4,
spec/04-summaries.md).

`OwnerSummary` holds the exact subscriptions and their packed IDs
(DEF-SUM-11), the ACGT of every row (DEF-SUM-12) and the pending delta
(DEF-SUM-14). It exports the `Summary` that is shipped, hands out the
deltas, answers remote rebuild requests (method 1), and re-checks the
candidates a summary reports before delivery (DEF-SUM-10, `recheck`).
"""

from __future__ import annotations

from typing import Iterable

from subsum.core.types import Event, Subscription
from subsum.impl.summary.acgt import ConstraintForest, IntervalForest
from subsum.impl.summary.ids import IdLayout
from subsum.impl.summary.normalize import NUMERIC, abstraction
from subsum.impl.summary.recheck import recheck
from subsum.impl.summary.summary import Delta, Summary, SummaryError


class OwnerSummary:
    """The owning broker's summary: exact subscriptions, IDs, ACGTs, deltas."""

    def __init__(self, broker: int, layout: IdLayout, schema: Iterable[tuple], virtual: str = "none") -> None:
        self.broker = broker
        self.layout = layout
        self.schema = tuple(schema)
        self.virtual = virtual
        Summary(layout, self.schema, virtual)  # validates the layout, schema and policy
        if not 0 <= broker < layout.brokers:
            raise SummaryError(f"broker {broker} is outside 0 .. {layout.brokers - 1}")
        self.index = {key: i for i, key in enumerate(self.schema)}
        self.by_name: dict[str, int] = {}
        self.subscriptions: dict[int, Subscription] = {}
        self.abstractions: dict[int, dict] = {}
        self.names: dict[int, str] = {}
        self.excluded: dict[str, Subscription] = {}
        self.forests: dict[tuple, IntervalForest | ConstraintForest] = {}
        self._next_slot = 0
        self._free_slots: list[int] = []
        self._released: list[int] = []  # slots whose deletion is not shipped yet
        self._pending_add: list[int] = []
        self._pending_delete: list[tuple[int, dict]] = []

    def _slot(self) -> int:
        """A free c2 slot: a released one if any, else the next unused; a
        broker whose c2 field is full is refused."""
        if self._free_slots:
            return self._free_slots.pop()
        if self._next_slot >= self.layout.max_subscriptions:
            raise SummaryError(f"broker {self.broker} already holds {self.layout.max_subscriptions} subscriptions, the most its c2 field allows")
        self._next_slot += 1
        return self._next_slot - 1

    def add(self, name: str, subscription: Subscription) -> int | None:
        """Add a subscription; return its packed ID, or None if its
        abstraction is empty (it can never match and is not summarized)."""
        if name in self.by_name or name in self.excluded:
            raise SummaryError(f"subscription {name!r} is already held by broker {self.broker}")
        for c in subscription.constraints:
            if (c.name, c.type) not in self.index:
                raise SummaryError(f"subscription {name!r} constrains {c.name}:{c.type}, which is not in the schema")
        abstract = abstraction(subscription)
        if abstract is None:
            self.excluded[name] = subscription
            return None
        sid = self.layout.encode(self.broker, self._slot(), self.layout.bitmap(self.index[k] for k in abstract))
        self.by_name[name] = sid
        self.subscriptions[sid] = subscription
        self.abstractions[sid] = abstract
        self.names[sid] = name
        for key, n in abstract.items():
            forest = self.forests.get(key)
            if forest is None:
                forest = IntervalForest() if key[1] in NUMERIC else ConstraintForest(self.virtual)
                self.forests[key] = forest
            forest.insert(n, sid)
        self._pending_add.append(sid)
        return sid

    def remove(self, name: str) -> int | None:
        """Delete a subscription by name; return its ID (None if it was excluded)."""
        if name in self.excluded:
            del self.excluded[name]
            return None
        if name not in self.by_name:
            raise SummaryError(f"broker {self.broker} holds no subscription {name!r}")
        sid = self.by_name.pop(name)
        abstract = self.abstractions.pop(sid)
        for key, n in abstract.items():
            forest = self.forests[key]
            removed = forest.remove(n, sid)
            assert removed, (key, n, sid)
            if not forest.roots:
                del self.forests[key]
        del self.subscriptions[sid]
        del self.names[sid]
        slot = self.layout.decode(sid)[1]
        if sid in self._pending_add:  # never shipped: nobody else knows the ID
            self._pending_add.remove(sid)
            self._free_slots.append(slot)
        else:  # reusable once the deletion has been shipped (take_delta)
            self._pending_delete.append((sid, abstract))
            self._released.append(slot)
        return sid

    def export(self) -> Summary:
        """The summary rows: one per ACGT, (root constraint, all IDs of the tree)."""
        out = Summary(self.layout, self.schema, self.virtual)
        for key in sorted(self.forests):
            for c, ids in self.forests[key].rows():
                out.insert(key, c, ids)
        out.unconditional = {sid for sid, a in self.abstractions.items() if not a}
        out.names = dict(self.names)
        out.merged_brokers = {self.broker}
        return out

    def has_pending(self) -> bool:
        """Whether the next delta would carry anything."""
        return bool(self._pending_add or self._pending_delete)

    def take_delta(self) -> Delta:
        """The delta since the last call: insertions and deletions."""
        inserted = Summary(self.layout, self.schema, self.virtual)
        for sid in self._pending_add:
            inserted.add_member(sid, self.abstractions[sid])
            inserted.names[sid] = self.names[sid]
        inserted.merged_brokers = {self.broker}
        delta = Delta(self.broker, inserted, list(self._pending_delete))
        self._pending_add, self._pending_delete = [], []
        self._free_slots += self._released
        self._released = []
        return delta

    def members_of(self, key, ids) -> list[tuple[int, object]]:
        """The owner's answer to a remote rebuild request (method 1): each
        ID's normalized constraint on `key`, for the IDs it still holds and
        has shipped. IDs it deleted (their deletion may still be on the way)
        or has not shipped yet are left out of the answer."""
        out = []
        pending = set(self._pending_add)
        for sid in sorted(ids):
            if sid not in self.abstractions or sid in pending:
                continue
            if key not in self.abstractions[sid]:
                raise SummaryError(f"broker {self.broker}'s subscription {sid} does not constrain {key[0]}:{key[1]}")
            out.append((sid, self.abstractions[sid][key]))
        return out

    def recheck(self, event: Event, candidates: Iterable[int]) -> set[int]:
        """DEF-SUM-10: the candidates whose exact subscription matches the
        event (IDs this broker does not hold are dropped)."""
        return recheck(self.subscriptions, event, candidates)
