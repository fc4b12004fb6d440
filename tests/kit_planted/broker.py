"""An external broker for `subsum conform broker` with one planted way of
being wrong (tests/test_kit_planted.py).

    broker.py PLANT

It runs examples/external/strawman_broker.py, a correct Strawman broker, as
its child and passes each request on; then it applies PLANT to the answer
(`none` leaves it right): the first message of an answer dropped, repeated,
or followed by one the broker never decided to send (a SUB for a filter no
one asked for), a line that is no message, or, from the tenth request on,
a crash midway through an answer. `no-bool` exits 3 on any request that
holds a bool (a broker without the type), writing why to standard error;
`log` writes a line to standard error per request."""

import json
import subprocess
import sys
from pathlib import Path

from answer import write_answer

STRAWMAN = Path(__file__).resolve().parents[2] / "examples" / "external" / "strawman_broker.py"


def main() -> None:
    plant = sys.argv[1]
    child = subprocess.Popen([sys.executable, str(STRAWMAN)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    for requests, request in enumerate(sys.stdin, 1):
        asked = json.loads(request)
        if plant == "no-bool" and (any(c.get("type") == "bool" for c in asked.get("filter", []))
                                   or any(isinstance(v, bool) for v in asked.get("event", {}).values())):
            print(f"broker.py: no bool here: {request.strip()}", file=sys.stderr, flush=True)
            sys.exit(3)
        if plant == "log":
            print(f"broker.py: request {requests}", file=sys.stderr, flush=True)
        child.stdin.write(request)
        child.stdin.flush()
        answer = []
        for line in child.stdout:
            if not line.strip():
                break
            answer.append(line.rstrip("\n"))
        if answer and plant == "dropped-message":
            answer.pop(0)
        elif answer and plant == "repeated-message":
            answer.insert(0, answer[0])
        elif answer and plant == "extra-message":
            first = json.loads(answer[0])
            answer.append(json.dumps({"to": first["to"], "kind": "SUB", "filter": [{"name": "planted", "type": "int", "op": "=", "value": 7}]}))
        elif answer and plant == "not-a-message":
            answer.append("{}")
        write_answer(answer, crash_midway=plant == "crash-midway" and requests >= 10 and bool(answer), part=1)


if __name__ == "__main__":
    main()
