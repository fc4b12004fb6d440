"""subsum fidelity: benchmarks/FIDELITY.md, every quantitative statement of
seeds 000, 001, 003 and 004 beside what the benches measured, with verdicts
computed by one rule (subsum/fidelity/verdict.py). It runs no benchmark: it
reads a results folder (`make bench` runs it last).

Bad input is exit 2 with `error: FILE:LINE: field 'F': message`, before
anything is written: an output that cannot be written (checked before the
results are read), and a file a statement reads that is absent, empty,
truncated, lacks a column it reads, holds nan or an infinity where a
number is read, or is not valid JSON (issue 51). `--allow-missing` lets
absent files through, marking their statements "not measured (file
absent)"; a corrupt file is refused all the same."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from subsum.fidelity import report as fid
from subsum.fidelity.load import FOLDER, StatementError
from subsum.cli.common.console import emit, out
from subsum.cli.common.options import BENCH_SCRATCH, format_option
from subsum.core.errors import InputError, SubsumError


class StatementFileError(SubsumError):
    """A statement file that breaks the schema (exit 2)."""


@click.command("fidelity")
@click.option("--results", "results_dir", type=click.Path(exists=True, file_okay=False), default="benchmarks/results", show_default=True,
              help="The results folder to read, one subfolder per bench (what `subsum bench NAME --out-dir DIR` wrote).")
@click.option("--output", type=click.Path(dir_okay=False), default=str(Path(BENCH_SCRATCH) / "FIDELITY.md"), show_default=True,
              help="Where FIDELITY.md goes (fidelity.json beside it). `--output benchmarks/FIDELITY.md` refreshes the committed table.")
@click.option("--statements", "statements_dir", type=click.Path(exists=True, file_okay=False), default=str(FOLDER), show_default=True,
              help="The folder of seed*.toml statement files (subsum/fidelity/statements/, shipped in the package).")
@click.option("--allow-missing", is_flag=True,
              help="A statement whose results file is absent is marked 'not measured (file absent)' (counted apart) instead of "
                   "stopping with exit 2. Empty, truncated or corrupt files are refused all the same.")
@format_option
def fidelity(results_dir, output, statements_dir, allow_missing, fmt) -> None:
    """Write FIDELITY.md: a row per quantitative statement of seeds 000
    §5–6, 001 §4, 003 §2.6–6 and 004, the seed's value beside ours (with its 95%
    interval), a verdict by the rule of spec/13 (matches, same trend,
    differs, not reproduced; a match the implementation makes true is
    counted apart, by construction) and, for every row that does not
    match, its explanation.
    Says so at the top when the results came from --quick runs.

    A results file that is absent, empty, truncated, lacks a column a
    statement reads, or holds nan or an infinity where a number is read,
    is refused (exit 2, naming file:line and field) and nothing is written;
    --allow-missing accepts absent files only."""
    try:
        fid.check_outputs(output, None, results_dir, statements_dir)
    except InputError as error:  # before any work, naming the option
        raise SubsumError(f"--output {output}: {error}") from None
    try:
        document = fid.run(results_dir, output, statements_dir=statements_dir, allow_missing=allow_missing)
    except StatementError as error:
        raise StatementFileError(str(error)) from None
    emit(document, fmt, lambda: show(document, output))


def show(document: dict, output: str) -> None:
    table = Table(title="seed statements against our results" + (" (QUICK results)" if document["quick"] else ""))
    marks = list(document["counts"]["all"]) if document["counts"] else list(fid.markings(False))  # the verdicts, and FILE_ABSENT
    for column in ("seed", *marks, "statements"):
        table.add_column(column)
    for seed, counts in sorted(document["counts"].items()):
        table.add_row(seed, *(str(counts[v]) for v in marks), str(sum(counts.values())))
    out.print(table)
    if document["unexplained"]:
        out.print("rows that differ but name no explanation: " + escape(", ".join(document["unexplained"])))
    if document.get("absent_files"):
        out.print(f"not measured, their files absent: {escape(', '.join(document['absent_files']))}")
    out.print(f"wrote {escape(output)} and {escape(str(Path(output).with_name('fidelity.json')))}")


COMMANDS = (fidelity,)
