"""subsum match | check-filter: matching events against subscriptions
(spec/03-matching.md, spec/07-pipeline.md; the work is
`subsum.app.match.match_files`) and the filter syntax (spec/01)."""

from __future__ import annotations

import click
from rich.markup import escape

from subsum.app.match import ENGINE_NAMES, PLANS, match_files
from subsum.impl.matching import engine_class
from subsum.impl.matching.columnar import compiled  # numba itself is imported at the first match
from subsum.cli.common.console import counter_table, err, write_json
from subsum.cli.common.options import ComponentName, distinct_files, json_option, output_option, spark_options
from subsum.cli.common.progress import heartbeat, quiet_option
from subsum.core.errors import SubsumError
from subsum.core.filters import FilterError, format_filter, parse_filter


@click.command()
@click.option("--subscriptions", "subs_path", required=True, type=click.Path(),
              help="Subscriptions: JSONL (.parquet with --engine spark).")
@click.option("--events", "events_path", required=True, type=click.Path(),
              help="Events: JSONL (.parquet with --engine spark).")
@click.option("--engine", type=ComponentName("engine", ENGINE_NAMES, engine_class), default="vectorized", show_default=True,
              help="Matching engine (spec/03-matching.md, spec/07-pipeline.md). All give the same lines; "
                   "'model' is the slow reference; 'spark' runs on PySpark. Or a plug-in engine, named as module:attribute "
                   "or by a subsum.engines entry point (spec/11-plugins.md).")
@output_option("Write the result lines here (default: standard output). With --engine spark, a .parquet path writes Parquet.")
@click.option("--stats", "show_stats", is_flag=True, help="Print the engine's work counters and timings to standard error.")
@json_option("Write the engine's work counters and timings as JSON to FILE (standard output carries the result lines).")
@click.option("--plan", type=click.Choice(PLANS), default=None,
              help="With --engine spark: 'sql' matches with Spark SQL only (no Python on the executors), 'kernel' runs "
                   "subsum's compiled kernel on the executors (they must import subsum), 'auto' (the default) asks the "
                   "executors once and takes kernel when they can (spec/07-pipeline.md DEF-PIPE-4).")
@spark_options
@quiet_option
def match(subs_path: str, events_path: str, engine: str, output_path: str | None, show_stats: bool, json_path: str | None,
          plan: str | None, master: str | None, spark_conf: tuple[str, ...], spark_timeout: float) -> None:
    """Match events against subscriptions: one result line per event.

    Each line is {"event": ID, "subscriptions": [IDs, sorted]}, in input order.
    """
    distinct_files({"subscriptions": subs_path, "events": events_path}, {"output": output_path, "json": json_path})
    if engine == "compiled":  # numba compiles the kernels at the first use after an install (about 30 s): say so while it does
        with heartbeat("loading the compiled engine's kernels (the first use after an install compiles them, about 30 s)"):
            compiled.warm()
    stats = match_files(subs_path, events_path, engine, output_path, click.echo, master=master, spark_conf=spark_conf,
                        spark_timeout=spark_timeout, counters=show_stats or json_path is not None, progress=err.is_terminal,
                        plan=plan)
    if engine == "spark":
        err.print(f"plan: {stats['plan']}" + (f" ({escape(stats['plan_reason'])})" if "plan_reason" in stats else ""))
    if output_path:
        err.print(f"results -> {escape(output_path)}" if engine == "spark" else
                  f"{stats.get('events', '?')} events x {stats['subscriptions']} subscriptions -> {escape(output_path)}")
    if json_path:
        write_json(json_path, stats)
    if show_stats:
        err.print(counter_table(f"subsum match --engine {engine}", stats))


@click.command("check-filter")
@click.argument("text")
def check_filter(text: str) -> None:
    """Parse a filter and print its normal form, or explain the error (exit 2)."""
    try:
        subscription = parse_filter(text)
    except FilterError as exc:
        raise FilterSyntaxError(text, exc) from None
    click.echo(format_filter(subscription))


class FilterSyntaxError(SubsumError):
    """A filter given on the command line that does not parse: the message
    points at the column below the text."""

    def __init__(self, text: str, exc: FilterError) -> None:
        before = text[:exc.column - 1]
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        where = f"line {line}, column {column}" if "\n" in text else f"column {column}"
        super().__init__(f"{where}: {exc.message}")
        shown = text.split("\n")[line - 1]
        if shown.isprintable() and len(shown) <= 200:  # the text with a caret under the column
            self.context = (f"  {shown}", f"  {' ' * (column - 1)}^")


COMMANDS = (match, check_filter)
