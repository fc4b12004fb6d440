"""Two matching engines written as subsum plug-ins (spec/11-plugins.md).

`ScanEngine` groups each subscription's constraints by attribute (name,
type) and, per event, tests only the constraints on the attributes the
event has: counting matching (seed 001 §2) over a dict instead of an
index. `SloppyWildcardEngine` is the same engine with a planted bug: it
tests `wildcard "L*R"` as "starts with L and ends with R" and forgets that
the two parts may not overlap, so `"ab*ba"` matches the value "aba".

Both subclass `Engine`, which keeps the ids, the empty subscription and
the work counters; an engine implements three hooks. The operators are
subsum's own table (`HOLDS`, spec/01 DEF-DATA-6): what is the plug-in's is
how it finds the constraints to test. Check one with
`subsum verify --engine myplugins.engines:ScanEngine`.
"""

from collections import defaultdict

from subsum.impl.matching import Engine
from subsum.impl.matching.ops import HOLDS


class ScanEngine(Engine):
    """Counting matching over constraints grouped by (name, type)."""

    name = "scan"

    def __init__(self, subscriptions=(), count_distinct=True):
        self.by_attribute = defaultdict(dict)  # (name, type) -> {slot: [(op, value), ...]}
        super().__init__(subscriptions, count_distinct)

    def _insert(self, slot, keys):
        for type_, name, op, value in keys:
            self.by_attribute[(name, type_)].setdefault(slot, []).append((op, value))

    def _delete(self, slot):
        for attribute in list(self.by_attribute):
            self.by_attribute[attribute].pop(slot, None)
            if not self.by_attribute[attribute]:
                del self.by_attribute[attribute]

    def test(self, op, v, w):
        return HOLDS[op](v, w)

    def _match_slots(self, events):
        for event in events:
            satisfied = defaultdict(set)  # slot -> its satisfied constraints
            for a in event.attributes:
                for slot, constraints in self.by_attribute.get((a.name, a.type), {}).items():
                    for op, value in constraints:
                        self.stats.counter_increments += 1
                        if self.test(op, a.value, value):
                            satisfied[slot].add((a.name, a.type, op, value))
            yield [slot for slot, held in satisfied.items() if len(held) == self._size[slot]]


class SloppyWildcardEngine(ScanEngine):
    """ScanEngine with a planted bug: wildcard parts may overlap."""

    name = "sloppy-wildcard"

    def test(self, op, v, w):
        if op == "wildcard":
            left, _, right = w.partition("*")
            return v.startswith(left) and v.endswith(right)  # BUG: no length check
        return HOLDS[op](v, w)
