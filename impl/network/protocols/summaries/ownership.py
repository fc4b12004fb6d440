"""The owner's role in summary-based routing (seed 000 §4.3; spec/08
DEF-SR-4, spec/04 DEF-SUM-10): a broker owns its clients' subscriptions.

It keeps them in an `OwnerSummary` (c1 = its id), names each (client,
filter) once, answers other brokers' questions about its IDs (method 1 of
a deletion), and, when an event reaches it with some of its IDs, re-checks
them exactly and says which clients get the event.
"""

from __future__ import annotations

from typing import Mapping

from subsum.core.types import Event, Subscription
from subsum.impl.summary import OwnerSummary


class Ownership:
    """One broker's own subscriptions."""

    __slots__ = ("summary", "names", "client_of", "subscribed_count")

    def __init__(self, summary: OwnerSummary) -> None:
        self.summary = summary
        self.names: dict[tuple[int, Subscription], str] = {}  # (client, filter) -> subscription name at the owner
        self.client_of: dict[int, int] = {}  # subscription ID -> client
        self.subscribed_count = 0

    def subscribe(self, client: int, f: Subscription) -> bool:
        """Client subscribes f; False if it holds f already (DEF-NET-2: a
        client holds a filter once, so subscribing again changes nothing)."""
        if (client, f) in self.names:
            return False
        self.subscribed_count += 1
        name = f"{client}:{self.subscribed_count}"
        sid = self.summary.add(name, f)
        self.names[(client, f)] = name
        if sid is not None:
            self.client_of[sid] = client
        return True

    def unsubscribe(self, client: int, f: Subscription) -> bool:
        """Client drops f; False if it did not hold it."""
        name = self.names.pop((client, f), None)
        if name is None:
            return False
        sid = self.summary.remove(name)
        if sid is not None:
            self.client_of.pop(sid, None)
        return True

    def has_pending(self) -> bool:
        """Changes not yet taken into a round's delta."""
        return self.summary.has_pending()

    def answer(self, query: Mapping) -> dict:
        """DELETE-ANSWER's content: for each summary key, the (ID, constraint)
        pairs of the asked IDs this broker owns."""
        return {key: self.summary.members_of(key, ids) for key, ids in sorted(query.items())}

    def clients_for(self, event: Event, ids, publisher: int) -> set[int]:
        """DEF-SUM-10: the owner's exact re-check of the matched IDs; each
        client holding a surviving subscription, the publisher aside."""
        return {self.client_of[sid] for sid in self.summary.recheck(event, ids)} - {publisher}
