"""One worker process of `subsum verify --jobs N` (conformance/runner/pool.py
is the parent's side): it reads the run's settings, makes the same selection
of checks as its parent, and runs the checks it is handed, one per line of
its input, each under its budget and a watchdog, writing JSON lines."""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import IO, Callable

from subsum.conformance.runner import profiles
from subsum.conformance.runner import verify
from subsum.conformance.runner.budget import Watchdog
from subsum.conformance.claims import Check, CheckResult, Claim, run_check
from subsum.conformance.runner.pool import runs


def serve(lines: IO[str], write: Callable[[dict], None]) -> None:
    """A worker's loop: the run's settings, then one check index per line until the input ends."""
    settings = json.loads(lines.readline())
    selection = verify.select(tuple(settings["claims"]), settings["engine"], settings["cache"])
    profiles.load(settings["profile"])
    scale = settings["budget_scale"]
    work = runs(selection.claims)
    if [[claim.id, check.name] for claim, check in work] != settings["checks"]:
        write({"error": "a worker process sees other checks than the process that started it (a registry changed at run "
                        "time?); run with --jobs 1"})
        return
    with selection.context():
        for line in lines:
            index = json.loads(line)["check"]
            claim, check = work[index]
            write({"start": index})
            hard = check.budget * scale * profiles.active().limit
            began = time.perf_counter()

            def expired(index: int = index, claim: Claim = claim, check: Check = check, hard: float = hard, began: float = began) -> None:
                write({"stuck": index, "hard": hard, **CheckResult(
                    claim.id, check.kind, check.name, "timeout", round(time.perf_counter() - began, 3),
                    f"did not stop {verify.WATCHDOG_GRACE:g} s after its budget of {hard:g} s; the run was ended").to_json()})

            with Watchdog(hard + profiles.active().shrink_grace, verify.WATCHDOG_GRACE, expired):
                write({"result": index, **run_check(claim, check, scale).to_json()})


def main() -> None:
    out = sys.stdout
    sys.stdout = sys.stderr  # a check that prints must not corrupt the protocol
    lock = threading.Lock()

    def write(message: dict) -> None:
        with lock:
            out.write(json.dumps(message, ensure_ascii=False) + "\n")
            out.flush()

    serve(sys.stdin, write)


if __name__ == "__main__":
    main()
