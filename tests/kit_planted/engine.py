"""A matching engine for `subsum conform matching --persistent` with one
planted way of being wrong (tests/test_kit_planted.py).

    engine.py PLANT

It answers each request with subsum's `vectorized` engine, then applies
PLANT to the answer (`none` leaves it right). A plant changes the answer
only where the workload gives it something to change (an event with a
match to drop, two events to confuse), so each is caught on the first
workload of that shape."""

import json
import sys

from answer import write_answer
from subsum.core.jsonio import read_events, read_subscriptions
from subsum.impl.matching import make_engine


def right_answer(subscriptions_path: str, events_path: str) -> list[tuple[str, list[str]]]:
    subscriptions = read_subscriptions(subscriptions_path)
    events = read_events(events_path)
    engine = make_engine("vectorized", [(s.id, s.subscription) for s in subscriptions])
    matched = engine.match_batch([e.event for e in events])
    return [(e.id, sorted(ids)) for e, ids in zip(events, matched)]


def planted(plant: str, answer: list[tuple[str, list[str]]], every_id: list[str], requests: int) -> list[tuple[str, list[str]]]:
    answer = [(eid, list(ids)) for eid, ids in answer]
    with_match = [k for k, (_, ids) in enumerate(answer) if ids]
    if plant == "dropped-match" and with_match:
        answer[with_match[0]][1].pop()
    elif plant == "extra-match":
        for eid, ids in answer:
            missing = sorted(set(every_id) - set(ids))
            if missing:
                ids[:] = sorted(ids + missing[:1])
                break
    elif plant == "repeated-id" and with_match:
        ids = answer[with_match[0]][1]
        ids.insert(0, ids[0])
    elif plant == "unsorted-ids":
        for _, ids in answer:
            if len(ids) >= 2:
                ids.reverse()
                break
    elif plant == "missing-line" and answer:
        answer.pop()
    elif plant == "extra-line":
        answer.append(("planted-extra-event", []))
    elif plant == "other-event" and len(answer) >= 2:
        answer[0] = (answer[1][0], answer[0][1])
    return answer


def main() -> None:
    plant = sys.argv[1]
    for requests, request in enumerate(sys.stdin, 1):
        paths = json.loads(request)
        answer = right_answer(paths["subscriptions"], paths["events"])
        every_id = [s.id for s in read_subscriptions(paths["subscriptions"])]
        lines = [json.dumps({"event": eid, "subscriptions": ids}) for eid, ids in planted(plant, answer, every_id, requests)]
        # crash-midway: half an answer, then the process ends
        write_answer(lines, crash_midway=plant == "crash-midway" and requests >= 3, part=len(lines) // 2)


if __name__ == "__main__":
    main()
