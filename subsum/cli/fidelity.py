"""subsum fidelity: benchmarks/FIDELITY.md, every quantitative statement of
seeds 000, 003 and 004 beside what the benches measured, with verdicts
computed by one rule (subsum/bench/verdict.py). It runs no benchmark: it
reads a results folder (`make bench` runs it last)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from subsum.bench import fidelity as fid
from subsum.bench import verdict as rule
from subsum.bench.fidelity_load import FOLDER, StatementError
from subsum.cli.console import emit, out
from subsum.cli.options import BENCH_SCRATCH, format_option
from subsum.core.errors import SubsumError


class StatementFileError(SubsumError):
    """A statement file that breaks the schema (exit 2)."""


@click.command("fidelity")
@click.option("--results", "results_dir", type=click.Path(exists=True, file_okay=False), default="benchmarks/results", show_default=True,
              help="The results folder to read, one subfolder per bench (what `subsum bench NAME --out-dir DIR` wrote).")
@click.option("--output", type=click.Path(dir_okay=False), default=str(Path(BENCH_SCRATCH) / "FIDELITY.md"), show_default=True,
              help="Where FIDELITY.md goes (fidelity.json beside it). `--output benchmarks/FIDELITY.md` refreshes the committed table.")
@click.option("--statements", "statements_dir", type=click.Path(exists=True, file_okay=False), default=str(FOLDER), show_default=True,
              help="The folder of seed*.toml statement files (benchmarks/fidelity/).")
@format_option
def fidelity(results_dir, output, statements_dir, fmt) -> None:
    """Write FIDELITY.md: a row per quantitative statement of seeds 000
    §5–6, 003 §2.6–6 and 004, the seed's value beside ours (with its 95%
    interval), a computed verdict (matches, same trend, differs, not
    reproduced) and, where it differs, the experiment that explains it.
    Says so at the top when the results came from --quick runs."""
    try:
        document = fid.run(results_dir, output, statements_dir=statements_dir)
    except StatementError as error:
        raise StatementFileError(str(error)) from None
    emit(document, fmt, lambda: show(document, output))


def show(document: dict, output: str) -> None:
    table = Table(title="seed statements against our results" + (" (QUICK results)" if document["quick"] else ""))
    for column in ("seed", *rule.VERDICTS, "statements"):
        table.add_column(column)
    for seed, counts in sorted(document["counts"].items()):
        table.add_row(seed, *(str(counts[v]) for v in rule.VERDICTS), str(sum(counts.values())))
    out.print(table)
    if document["unexplained"]:
        out.print("rows that differ but name no explanation: " + escape(", ".join(document["unexplained"])))
    out.print(f"wrote {escape(output)} and {escape(str(Path(output).with_name('fidelity.json')))}")


COMMANDS = (fidelity,)
