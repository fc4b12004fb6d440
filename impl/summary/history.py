"""Summaries across brokers (spec/04-summaries.md DEF-SUM-14):
the history summary a broker keeps of everything it has merged, and the
directory of owners that answers method 1's remote rebuild requests."""

from __future__ import annotations

from typing import Iterable

from subsum.impl.summary.owner import OwnerSummary
from subsum.impl.summary.summary import Summary, SummaryError


class Directory:
    """Owners by broker number: answers remote rebuild requests (method 1)."""

    def __init__(self, owners: Iterable[OwnerSummary]) -> None:
        self.owners = {o.broker: o for o in owners}

    def resolve(self, key, ids) -> list:
        if not self.owners:
            raise SummaryError(f"no owner brokers to ask about {key[0]}:{key[1]}")
        layout = next(iter(self.owners.values())).layout
        by_broker: dict[int, list[int]] = {}
        for sid in ids:
            by_broker.setdefault(layout.broker_of(sid), []).append(sid)
        out = []
        for broker, sids in sorted(by_broker.items()):
            if broker not in self.owners:
                raise SummaryError(f"no owner broker {broker} to ask about {key[0]}:{key[1]}")
            out += self.owners[broker].members_of(key, sids)
        return out


class History(Summary):
    """DEF-SUM-14: a broker's history summary: everything active, with the
    Merged_Brokers list of the brokers whose summaries it contains."""

    @classmethod
    def of(cls, own: Summary) -> "History":
        out = cls(own.layout, own.schema, own.virtual)
        out.merge_in(own)
        return out
