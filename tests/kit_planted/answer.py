"""How the planted processes write one answer (broker.py, engine.py): its
lines and the blank line that ends it; or, where the plant crashes midway,
only the first `part` of the lines, and the process exits 1."""

import sys


def write_answer(lines: list[str], crash_midway: bool = False, part: int = 0) -> None:
    """Write `lines` as one answer, or `lines[:part]` and exit 1 when `crash_midway`."""
    if crash_midway:
        sys.stdout.write("".join(line + "\n" for line in lines[:part]))
        sys.stdout.flush()
        sys.exit(1)
    sys.stdout.write("".join(line + "\n" for line in lines) + "\n")
    sys.stdout.flush()
