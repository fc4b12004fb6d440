"""The README's tour is run the way a reader runs it: every `$ ...` command
of "A 5-minute tour", literally and in order, each in a child process with
`subsum` on the PATH that `. .venv/bin/activate` sets (the folder of this
Python's console scripts), in a scratch folder that holds nothing but a copy
of examples/. So every file the tour reads must be shipped in examples/, a
command may use what an earlier one wrote (b.json, t.jsonl, fuzz-replays/),
and nothing is written into the tree.

Each command must exit as the page says: 2 when its output starts with
`error:` (bad input), 1 when its last line is the verdict of a check that
found a violation, else 0. Its output (standard output and error as a
terminal shows them, interleaved) must be what the page shows:

- the whole output, line for line, unless the page trims it: a `...` line,
  or table rows without the table's frame, show an excerpt, whose lines
  must appear in the output in the page's order;
- a table row is compared cell by cell (the padding depends on rows the
  page leaves out);
- what depends on time is not compared: the cells of a `time (s)` column
  and of a `*seconds` or `*_per_second` row, the times and rates of a
  fuzzing or exploring run (and a fuzzing run's counts, when a time budget
  ends it), verify's total time.

The two commands that start Spark (`match --engine spark`, `trace-check`)
cost about a minute between them, most of it the JVM's start: `make test`
runs the tour without them (their paths are tested in every run by
tests/test_spark.py and tests/test_engines.py), `make thorough` runs the
whole tour, in order.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import attrs
import pytest


ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TOUR = README[README.index("## A 5-minute tour"):README.index("## Command-line conventions")]
BIN = Path(sys.executable).parent  # .venv/bin: what activating the venv puts first on PATH

#: Commands other than subsum the tour may show (run literally too).
OTHER_COMMANDS = ("head",)


@attrs.frozen
class Block:
    """One `$ COMMAND` of the page and the output lines it shows."""

    command: str
    shown: tuple[str, ...]


def tour_blocks(text: str = TOUR) -> list[Block]:
    """Each indented `$ ...` of the tour (a trailing backslash continues it) and the indented lines under it."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("    $ "):
            command = line[len("    $ "):]
            while command.endswith("\\"):
                i += 1
                command = command[:-1].rstrip() + " " + lines[i].strip()
            output = []
            i += 1
            while i < len(lines) and lines[i].startswith("    ") and not lines[i].startswith("    $ "):
                output.append(lines[i][4:].rstrip())
                i += 1
            blocks.append(Block(command, tuple(output)))
            continue
        i += 1
    return blocks


BLOCKS = tour_blocks()


# --- what is compared ------------------------------------------------------------------------

GAP = "..."
TIMED_COLUMNS = {"time (s)"}
TIMED_ROW = re.compile(r"(^|_)seconds$|_per_second$")
#: (pattern, replacement) for the parts of a plain line that depend on time, on both sides.
TIMED = [
    (re.compile(r"in [\d.]+ s \(([\d,]+) schedules/min\)"), "in … s (… schedules/min)"),  # a fuzzing run's pace
    (re.compile(r"[\d.]+ s \([\d,]+ states/s\)"), "… s (… states/s)"),  # an exploring run's
    (re.compile(r"\(([\d,]+ claims?), [\d.]+ s\)"), r"(\1, … s)"),  # verify's total
    (re.compile(r" in [\d.]+s$"), " in …s"),  # a bench's "wrote ... in 21.8s"
    (re.compile(r"(seed -?\d+), [\d.]+ s\)$"), r"\1, … s)"),  # a conform matching run's time
]
#: A fuzzing run that a time budget ends has done what the machine's speed allowed.
BUDGET_COUNTS = (re.compile(r"[\d,]+ schedules, [\d,]+ operations in"), "… schedules, … operations in")
#: The last line of a check that found a violation (on standard error; exit 1).
VERDICT = re.compile(r"^[\d,]+ violations(;| in )|^CLM-[A-Z]+-\d+ (still fails|violated;)|^the engine (still )?disagrees with the model")


@attrs.frozen
class Row:
    """A table row's cells; `timed` are the indexes of cells that depend on time."""

    cells: tuple[str, ...]
    timed: frozenset[int] = frozenset()

    def matches(self, shown: "Row") -> bool:
        return len(self.cells) == len(shown.cells) and all(
            i in self.timed or mine == theirs for i, (mine, theirs) in enumerate(zip(self.cells, shown.cells)))

    def __str__(self) -> str:
        return "│ " + " │ ".join("…" if i in self.timed else c for i, c in enumerate(self.cells)) + " │"


def cells(line: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in re.split("[│┃]", line)[1:-1])


def plain(line: str, budgeted: bool) -> str:
    for pattern, replacement in TIMED + ([BUDGET_COUNTS] if budgeted else []):
        line = pattern.sub(replacement, line)
    return line


def printed_items(lines: list[str], budgeted: bool) -> list[str | Row]:
    """The command's output: plain lines (times masked) and table rows (timed cells marked from the table's header)."""
    items: list[str | Row] = []
    header: tuple[str, ...] = ()
    for line in lines:
        if line.lstrip().startswith("┏"):
            header = ()
        if "┃" in line:
            header = cells(line)
            items.append(Row(header))
        elif "│" in line:
            row = cells(line)
            timed = {i for i, name in enumerate(header) if name in TIMED_COLUMNS}
            if row and TIMED_ROW.search(row[0]):
                timed |= set(range(1, len(row)))
            items.append(Row(row, frozenset(timed)))
        else:
            items.append(plain(line, budgeted))
    return items


def is_gap(line: str) -> bool:
    return line.strip() == GAP


def shown_items(lines: tuple[str, ...], budgeted: bool) -> list[str | Row]:
    return [GAP if is_gap(line) else Row(cells(line)) if re.search("[│┃]", line) else plain(line, budgeted) for line in lines]


def same(printed: str | Row, shown: str | Row) -> bool:
    if isinstance(printed, Row) and isinstance(shown, Row):
        return printed.matches(shown)
    return printed == shown


def trimmed(block: Block) -> bool:
    """The page shows an excerpt: a `...` line, or table rows without the table's frame."""
    framed = any(line.lstrip().startswith(("┏", "└")) for line in block.shown)
    return any(map(is_gap, block.shown)) or (not framed and any(re.search("[│┃]", line) for line in block.shown))


def differences(block: Block, output: list[str]) -> str | None:
    """None when the output is what the page shows, else what differs."""
    budgeted = "--budget" in shlex.split(block.command)
    printed, shown = printed_items(output, budgeted), shown_items(block.shown, budgeted)
    if not trimmed(block):
        if len(printed) == len(shown) and all(same(p, s) for p, s in zip(printed, shown)):
            return None
        return "the page shows:\n  " + "\n  ".join(map(str, shown)) + "\nthe command printed:\n  " + "\n  ".join(map(str, printed))
    position = 0
    for wanted in (s for s in shown if s != GAP):
        while position < len(printed) and not same(printed[position], wanted):
            position += 1
        if position == len(printed):
            return f"the page shows\n  {wanted}\nwhich is not in the output (after the lines before it):\n  " + "\n  ".join(map(str, printed))
        position += 1
    return None


def expected_status(block: Block) -> int:
    if block.shown and block.shown[0].startswith("error:"):
        return 2
    if block.shown and VERDICT.search(block.shown[-1]):
        return 1
    return 0


# --- running the tour ------------------------------------------------------------------------

def run(command: str, cwd: Path) -> tuple[subprocess.CompletedProcess, float]:
    """COMMAND as a shell with the venv activated runs it: found on PATH, on a 200-column terminal,
    standard output and error interleaved as a terminal shows them."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200", "NO_COLOR": "1",
           "PYTHONUNBUFFERED": "1",
           # On a terminal, progress is a live line that is gone when the run ends; in a log it is a line every
           # 10 s, which a slow machine would add to the output: none here.
           "SUBSUM_PROGRESS_SECONDS": "100000"}
    started = time.perf_counter()
    result = subprocess.run(shlex.split(command, comments=True), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, timeout=600)
    return result, time.perf_counter() - started


def test_the_tour_shows_its_commands():
    names = [shlex.split(b.command)[0] for b in BLOCKS]
    assert set(names) <= {"subsum", *OTHER_COMMANDS}, names
    assert names.count("subsum") >= 30, [b.command for b in BLOCKS]
    assert all(b.shown for b in BLOCKS), [b.command for b in BLOCKS if not b.shown]
    statuses = [expected_status(b) for b in BLOCKS]
    assert statuses.count(1) >= 4 and statuses.count(2) >= 4, list(zip(statuses, (b.command for b in BLOCKS)))


def test_the_page_says_how_subsum_gets_on_path_before_the_tour_types_it():
    first_command = README.index("    $ subsum ")
    assert ". .venv/bin/activate" in README[:first_command] and ".venv/bin/subsum" in README[:first_command]
    assert (BIN / "subsum").is_file(), f"{BIN}/subsum: the console script the tour runs"


def test_the_comparison_masks_only_what_depends_on_time():
    fuzz = Block("subsum fuzz reconfig --budget 5", ("strawman: 426 schedules, 28131 operations in 5.0 s (5,110 schedules/min); 0 violations",))
    assert differences(fuzz, ["strawman: 9 schedules, 99 operations in 5.1 s (106 schedules/min); 0 violations"]) is None
    assert differences(fuzz, ["strawman: 9 schedules, 99 operations in 5.1 s (106 schedules/min); 1 violations"])
    replay = Block("subsum replay F", ("CLM-NET-6 violated at operation 3 of 4: broker 1 UNSUB from 0: sent []",))
    assert differences(replay, ["CLM-NET-6 violated at operation 3 of 4: broker 1 UNSUB from 0: sent []"]) is None
    assert differences(replay, ["CLM-NET-6 violated at operation 2 of 4: broker 1 UNSUB from 0: sent []"])  # the place is compared
    stats = Block("subsum match --stats", ("│ read_seconds │ 0.1 │", "│ matches │ 1 │"))
    assert differences(stats, ["┏━━┓", "┃ counter ┃ value ┃", "│ read_seconds  │   0.25 │", "│ matches       │      1 │"]) is None
    assert differences(stats, ["│ read_seconds │ 0.25 │", "│ matches │ 2 │"])
    assert expected_status(Block("subsum x", ("error: bad",))) == 2
    assert expected_status(Block("subsum x", ("a", "3 violations; replay files in fuzz-replays"))) == 1
    assert expected_status(Block("subsum x", ("a", "0 violations"))) == 0


def starts_spark(block: Block) -> bool:
    words = shlex.split(block.command)
    return words[:2] == ["subsum", "trace-check"] or "--engine spark" in block.command


def run_tour(folder: Path, blocks: list[Block]) -> None:
    """Each block's command, in order, from a scratch copy of examples/ alone; every difference is reported at once."""
    shutil.copytree(ROOT / "examples", folder / "examples", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    failures, times = [], []
    for block in blocks:
        result, seconds = run(block.command, folder)
        times.append((round(seconds, 1), block.command[:70]))
        output = [line.rstrip() for line in result.stdout.splitlines() if line.strip()]
        wrong = differences(block, output)
        status = expected_status(block)
        if result.returncode != status:
            failures.append(f"$ {block.command}\nexit {result.returncode}, the page implies {status}:\n  " + "\n  ".join(output))
        elif wrong:
            failures.append(f"$ {block.command}\n{wrong}")
    assert not failures, "\n\n".join(failures) + "\n\ntimes: " + repr(times)


def test_the_tour_runs_as_the_page_shows(tmp_path):
    """Every command of the tour but the two that start Spark, in order (the module's docstring says why)."""
    blocks = [b for b in BLOCKS if not starts_spark(b)]
    assert len(BLOCKS) - len(blocks) == 2, [b.command for b in BLOCKS if starts_spark(b)]
    run_tour(tmp_path, blocks)


@pytest.mark.thorough
def test_the_whole_tour_runs_as_the_page_shows(tmp_path):
    """Every command of the tour, the Spark ones included, in order."""
    run_tour(tmp_path, BLOCKS)


#: "Bring your own implementation"'s whole loop with the Java engine: build, run with --keep-going, read a replay,
#: replay it, declare the gaps (issue 55)
JAVA_LOOP = README[README.index("The whole loop, with a small engine in Java"):README.index("`--unsupported` takes operators")]


def test_the_java_loop_runs_as_the_page_shows(tmp_path):
    blocks = tour_blocks(JAVA_LOOP)
    assert [shlex.split(b.command)[0] for b in blocks] == ["javac", "subsum", "cat", "subsum", "subsum"]
    assert [expected_status(b) for b in blocks] == [0, 1, 0, 1, 0]
    run_tour(tmp_path, blocks)
