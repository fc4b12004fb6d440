#!/usr/bin/env python3
"""Subscription forwarding with Strawman reconfiguration (seed 002), as an
external broker process for `subsum conform broker` (spec/11-plugins.md
DEF-PLUG-6). It imports nothing from subsum: it is what another team's
implementation would be, in Python here, in any language elsewhere.

    strawman_broker.py [--forget-second-subscriber]

One process hosts every broker. Each request line names a broker and what
happened to it: START (it starts, empty), SUB, UNSUB or EVENT from a
neighbor, or LINK-ADDED or LINK-REMOVED. The answer is the messages that broker sends, one JSON line
each, then an empty line. `--forget-second-subscriber` plants a bug: when
a filter gets its second subscriber, the broker does not tell the first.
"""

import json
import operator
import sys

CLIENT_BASE = 1_000_000  # nodes from here on are clients (the simulator's numbering)


def wildcard(v, pattern):
    """`l*r`: starts with l, ends with r, and holds both without overlap."""
    left, _, right = pattern.partition("*")
    return v.startswith(left) and v.endswith(right) and len(v) >= len(left) + len(right)


#: op -> op(v, w), the event's value v against the constraint's value w (spec/01 DEF-DATA-6)
OPERATORS = {
    "any": lambda v, w: True, "=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
    ">=": operator.ge, "prefix": str.startswith, "suffix": str.endswith, "contains": lambda v, w: w in v, "wildcard": wildcard,
}


def type_of(value):
    return "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "float" if isinstance(value, float) else "string"


def matches(constraints, attributes):
    for c in constraints:
        if c["name"] not in attributes:
            return False
        value = attributes[c["name"]]
        if type_of(value) != c["type"] or not OPERATORS[c["op"]](value, c.get("value")):
            return False
    return True


class Broker:
    def __init__(self):
        self.neighbors = set()
        self.table = {}  # filter key -> (constraints, set of subscribers), in insertion order

    def brokers_but(self, n):
        return [m for m in sorted(self.neighbors) if m != n and m < CLIENT_BASE]

    def sub(self, n, f, forget):
        if n not in self.neighbors:
            return []
        key = json.dumps(f, sort_keys=True)
        _, subscribers = self.table.setdefault(key, (f, set()))
        if n in subscribers:
            return []
        subscribers.add(n)
        if len(subscribers) == 1:
            return [{"to": m, "kind": "SUB", "filter": f} for m in self.brokers_but(n)]
        if len(subscribers) == 2 and not forget:
            (first,) = subscribers - {n}
            if first < CLIENT_BASE:
                return [{"to": first, "kind": "SUB", "filter": f}]
        return []

    def unsub(self, n, f):
        key = json.dumps(f, sort_keys=True)
        if key not in self.table or n not in self.table[key][1]:
            return []
        subscribers = self.table[key][1]
        subscribers.discard(n)
        if not subscribers:
            del self.table[key]
            return [{"to": m, "kind": "UNSUB", "filter": f} for m in self.brokers_but(n)]
        if len(subscribers) == 1:
            (last,) = subscribers
            if last < CLIENT_BASE:
                return [{"to": last, "kind": "UNSUB", "filter": f}]
        return []

    def event(self, n, eid, attributes):
        targets = {m for f, subscribers in self.table.values() if matches(f, attributes) for m in subscribers if m != n}
        return [{"to": m, "kind": "EVENT", "id": eid} for m in sorted(targets)]

    def link_removed(self, n):
        sent = []
        for f, subscribers in list(self.table.values()):
            if n in subscribers:
                sent += self.unsub(n, f)
        self.neighbors.discard(n)
        return sent

    def link_added(self, n):
        self.neighbors.add(n)
        if n >= CLIENT_BASE:
            return []
        return [{"to": n, "kind": "SUB", "filter": f} for f, subscribers in self.table.values() if subscribers != {n}]


def main():
    forget = "--forget-second-subscriber" in sys.argv[1:]
    brokers = {}
    for line in sys.stdin:
        request = json.loads(line)
        kind = request["kind"]
        if kind == "START":  # a new broker, or a new one under the id of one that crashed or left
            brokers[request["broker"]] = Broker()
        broker = brokers[request["broker"]]
        if kind == "START":
            sent = []
        elif kind == "SUB":
            sent = broker.sub(request["from"], request["filter"], forget)
        elif kind == "UNSUB":
            sent = broker.unsub(request["from"], request["filter"])
        elif kind == "EVENT":
            sent = broker.event(request["from"], request["id"], request["event"])
        elif kind == "LINK-ADDED":
            sent = broker.link_added(request["neighbor"])
        elif kind == "LINK-REMOVED":
            sent = broker.link_removed(request["neighbor"])
        else:
            sys.exit(f"unknown request kind {kind!r}")
        sys.stdout.write("".join(json.dumps(m) + "\n" for m in sent) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
