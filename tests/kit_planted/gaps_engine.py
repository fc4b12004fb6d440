"""A matching engine with semantic gaps, for `subsum conform matching`'s
--keep-going and --unsupported (issue 55; tests/test_conform_kit.py).

    gaps_engine.py [--serve] [--gaps GAP,GAP,...] [--log] [SUBSCRIPTIONS EVENTS]

It reads the files with subsum's readers and matches with a plain scan of
its own, wrong in each GAP named:
- `wildcard`: `l*r` matches any value that starts with l and ends with r,
  without the length rule (so `ab*ba` matches "aba");
- `mixed`: an int constraint matches a float value of the same number, and
  a float constraint an int value (int/float cross-matching);
- `last-wins`: of several constraints on one name, only the last (in the
  file's order) is kept;
- `short-prefix`: `prefix` compares at most the first two characters (no
  pinned workload holds a longer prefix: only generated ones find it);
- `no-any`: `any` never matches (a missed match, where the others add
  one);
- `no-wildcard`: exits 3 on any wildcard constraint (an engine that does
  not support the operator at all).

With --serve it answers one request line per workload (persistent mode);
with --log it writes a line to standard error per workload; with --sleep S
it waits S seconds before each answer."""

import json
import sys
import time

from subsum.core.jsonio import read_events, read_subscriptions
from subsum.core.types import split_wildcard

NUMERIC = {"int", "float"}


def holds(op: str, value, wanted) -> bool:
    if op == "any":
        return True
    if op in ("prefix", "suffix", "contains"):
        return {"prefix": value.startswith, "suffix": value.endswith, "contains": value.__contains__}[op](wanted)
    return {"=": value == wanted, "!=": value != wanted, "<": value < wanted, "<=": value <= wanted,
            ">": value > wanted, ">=": value >= wanted}[op]


def constraint_holds(c, event, gaps: set[str]) -> bool:
    a = event.get(c.name)
    if a is None:
        return False
    if a.type != c.type and not ("mixed" in gaps and {a.type, c.type} == NUMERIC):
        return False
    if c.op == "any" and "no-any" in gaps:
        return False
    if c.op == "wildcard":
        left, right = split_wildcard(c.value)
        fits = "wildcard" in gaps or len(a.value) >= len(left) + len(right)
        return fits and a.value.startswith(left) and a.value.endswith(right)
    if c.op == "prefix" and "short-prefix" in gaps:
        return a.value.startswith(c.value[:2])
    return holds(c.op, a.value, c.value)


def kept(constraints, gaps: set[str]) -> list:
    if "last-wins" not in gaps:
        return list(constraints)
    last = {}
    for c in constraints:
        last[c.name] = c
    return list(last.values())


def answer(subscriptions_path: str, events_path: str, gaps: set[str]) -> list[str]:
    subscriptions = read_subscriptions(subscriptions_path)
    raw = {json.loads(line)["id"]: json.loads(line) for line in open(subscriptions_path, encoding="utf-8")}
    if "no-wildcard" in gaps and any(c.op == "wildcard" for s in subscriptions for c in s.subscription.constraints):
        print("gaps_engine: no wildcard here", file=sys.stderr)
        sys.exit(3)
    lines = []
    for e in read_events(events_path):
        ids = []
        for s in subscriptions:
            constraints = s.subscription.constraints
            if "last-wins" in gaps and "constraints" in raw[s.id]:  # the file's order
                order = [(c["name"], c["op"], json.dumps(c.get("value"))) for c in raw[s.id]["constraints"]]
                constraints = sorted(constraints, key=lambda c: order.index((c.name, c.op, json.dumps(c.value))))
            else:
                constraints = sorted(constraints, key=lambda c: (c.name, c.op, repr(c.value)))
            if all(constraint_holds(c, e.event, gaps) for c in kept(constraints, gaps)):
                ids.append(s.id)
        lines.append(json.dumps({"event": e.id, "subscriptions": sorted(ids)}))
    return lines


def main(argv: list[str]) -> None:
    serve = "--serve" in argv
    log = "--log" in argv
    gaps = set(argv[argv.index("--gaps") + 1].split(",")) if "--gaps" in argv else set()
    pause = float(argv[argv.index("--sleep") + 1]) if "--sleep" in argv else 0.0
    args = [a for k, a in enumerate(argv) if not a.startswith("--") and (k == 0 or argv[k - 1] not in ("--gaps", "--sleep"))]
    if not serve:
        print("\n".join(answer(args[0], args[1], gaps)))
        if log:
            print(f"gaps_engine: answered {args[1]}", file=sys.stderr)
        return
    for request in sys.stdin:
        time.sleep(pause)
        paths = json.loads(request)
        lines = answer(paths["subscriptions"], paths["events"], gaps)
        if log:  # before the answer, so that it is there when the answer is read
            print(f"gaps_engine: answered {paths['events']}", file=sys.stderr, flush=True)
        print("\n".join(lines + [""]), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
