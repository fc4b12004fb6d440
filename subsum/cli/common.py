"""What every command group shares: the two consoles, the option
conventions, and small renderers.

Option conventions (README, "Command-line conventions"):

- `--output FILE`: the command's main output (default: standard output);
- `--out-dir DIR`: a directory of outputs;
- `--format text|json`: how a report is printed on standard output;
- `--json FILE`: also write the command's report as JSON to FILE.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from pathlib import Path
from typing import Callable

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from subsum.core.errors import SubsumError
from subsum.core.jsonio import check_output_path, write_lines_atomically
from subsum.impl.network import PROTOCOLS, TOPOLOGIES

out = Console(emoji=False)  # ':x:' in a file name stays ':x:'
err = Console(stderr=True, emoji=False)

#: The largest count an option takes (events, subscriptions, steps, ...): far
#: beyond a useful run, and small enough that a typo cannot ask for years.
MAX_COUNT = 100_000_000

#: Where benchmarks write unless told otherwise (ignored by git); `--out-dir
#: benchmarks/results` refreshes the committed results.
BENCH_SCRATCH = "bench-out"


def say(message: str) -> None:
    """A progress or status line on standard error, as given (no markup)."""
    err.print(escape(message), highlight=False, soft_wrap=True)


def writable_path(_ctx, _param, value: str | None) -> str | None:
    """An output file is checked before the work starts (exit 2, nothing done).
    A URI (hdfs://, s3a://) is Spark's to check; a .parquet output is a
    folder Spark writes (and replaces)."""
    if value is not None and "://" not in value:
        check_output_path(value, folder_ok=value.rstrip("/").endswith(".parquet"))
    return value


def writable_dir(_ctx, param, value: str | None) -> str | None:
    """An output folder: an existing folder, or one that can be made (its
    nearest existing ancestor is a writable folder). Checked before the work starts."""
    if value is None or "://" in value:
        return value
    path = Path(value)
    ancestor = path
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise SubsumError(f"--{param.name.replace('_', '-')} {value}: {ancestor} is not a folder")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise SubsumError(f"--{param.name.replace('_', '-')} {value}: {ancestor} is not writable")
    return value


def distinct_files(inputs: dict[str, str | None], outputs: dict[str, str | None]) -> None:
    """Refuse a command whose outputs would overwrite one of its inputs or
    each other (option name -> path; None for an option not given). Two
    inputs may be one file."""
    def files(options: dict[str, str | None]) -> list[tuple[str, str, str]]:
        return [(os.path.realpath(v), o, v) for o, v in options.items() if v is not None and "://" not in v]

    seen = {key: option for key, option, _ in files(inputs)}
    for key, option, value in files(outputs):
        if key in seen:
            raise SubsumError(f"--{option.replace('_', '-')} {value} is the same file as --{seen[key].replace('_', '-')}")
        seen[key] = option


def output_option(help_text: str, required: bool = False) -> Callable:
    return click.option("--output", "output_path", type=click.Path(dir_okay=False), required=required, callback=writable_path,
                        help=help_text)


def json_option(help_text: str = "Also write the report as JSON to FILE.") -> Callable:
    return click.option("--json", "json_path", type=click.Path(dir_okay=False), callback=writable_path, help=help_text)


def format_option(fn: Callable) -> Callable:
    return click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
                        help="Print the report as a table (text) or as JSON.")(fn)


def bench_out_dir_option(name: str, files: str) -> Callable:
    return click.option("--out-dir", "out_dir", type=click.Path(file_okay=False), default=BENCH_SCRATCH, show_default=True,
                        callback=writable_dir, help=f"Write {files} into DIR/{name}/. `--out-dir benchmarks/results` refreshes the committed results.")


def write_json(path: str | Path, value: object) -> None:
    """Write a JSON report atomically."""
    write_lines_atomically(path, [json.dumps(value, indent=2, ensure_ascii=False)])


def counter_table(title: str, values: dict) -> Table:
    table = Table(title=title)
    table.add_column("counter")
    table.add_column("value", justify="right")
    for key, value in values.items():
        shown = json.dumps(value) if isinstance(value, dict) else f"{value:,}" if isinstance(value, int) else str(value)
        table.add_row(escape(key), escape(shown))
    return table


# --- options shared by several groups -------------------------------------------------------

def _not_nan(_ctx, param, value: float) -> float:
    if math.isnan(value):  # FloatRange lets NaN through: every comparison with it is false
        raise click.BadParameter("nan is not a number of seconds", param=param)
    return value


def spark_options(fn: Callable) -> Callable:
    """--master, --conf and --spark-timeout, for every command that runs Spark."""
    fn = click.option("--spark-timeout", type=click.FloatRange(min=1, max=86_400), default=120, show_default=True,
                      metavar="SECONDS", callback=_not_nan, help="On a cluster: give up (exit 3) when a job has waited this long with no "
                      "executor, e.g. no worker can hold spark.executor.memory.")(fn)
    fn = click.option("--conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
                      help="A Spark setting, passed through (repeatable), e.g. spark.driver.memory=4g.")(fn)
    return click.option("--master", default=None, metavar="URL",
                        help="Spark master URL (default: $SPARK_MASTER, else local[*]).")(fn)


#: Inputs up to this size (together) start the JVM for a short run (session.QUICK_START_JAVA_OPTIONS).
QUICK_START_BYTES = 32 * 2**20


def spark_session(master: str | None, spark_conf: tuple[str, ...], inputs: tuple[str, ...] = ()):
    """Start (or reuse) the Spark session; `SparkUnavailable` says what is missing.
    `inputs`: the command's input paths; when all are local and small, the JVM
    is tuned for a short run."""
    from subsum.impl.spark.session import get_session, parse_conf

    def size(path: str) -> float:
        p = Path(path)
        if "://" in path or not p.exists():
            return float("inf")
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size

    small = bool(inputs) and sum(size(str(p)) for p in inputs) <= QUICK_START_BYTES
    return get_session(master, parse_conf(spark_conf), progress=err.is_terminal, quick_start=small)


@contextlib.contextmanager
def spark_work(spark, timeout: float):
    """The frame of a command's Spark work. A job starved of executors for
    `timeout` seconds is cancelled and reported as such (`ResourceWatch`).
    The frames the command cached are dropped at the end: Spark finds a
    cached frame by its plan, and a plan names the file, not its content, so
    a later read of the same path in the same session (a second command in
    one process) would get the old content."""
    from subsum.impl.spark.session import NoExecutors, ResourceWatch

    try:
        with ResourceWatch(spark, timeout) as watch:
            try:
                yield
            except Exception:
                if watch.fired:
                    raise NoExecutors(watch.fired) from None
                raise
    finally:
        spark.catalog.clearCache()


class ComponentName(click.ParamType):
    """A built-in name from `choices`, or a plug-in (spec/11-plugins.md): an
    installed entry point of `kind` or module:attribute. Only the name is
    checked here; the command loads the plug-in and reports what is wrong
    with it (exit 2)."""

    name = "component"

    def __init__(self, kind: str, choices: tuple[str, ...]) -> None:
        self.kind, self.choices = kind, tuple(choices)

    def get_metavar(self, param, *args, **kwargs) -> str:  # click >= 8.2 passes ctx
        return "[" + "|".join(self.choices) + "|MODULE:ATTRIBUTE]"

    def convert(self, value, param, ctx):
        from subsum.core import plugins

        if value in self.choices or plugins.looks_like_path(value) or value in plugins.entry_points(self.kind):
            return value
        self.fail(f"{value!r} is not one of {', '.join(self.choices)}, an installed {plugins.GROUPS[self.kind]} entry point, "
                  "or a plug-in named as module:attribute", param, ctx)


def protocol_option(help_text: str, choices=tuple(PROTOCOLS)) -> Callable:
    return click.option("--protocol", type=ComponentName("protocol", tuple(choices)), default="strawman", show_default=True,
                        help=help_text + " Or a plug-in: a Broker subclass named as module:attribute or by a subsum.protocols "
                                         "entry point (spec/11-plugins.md).")


class FiniteFloat(click.FloatRange):
    """A float option in a range that also refuses nan and ±inf (click's FloatRange lets nan through)."""

    name = "finite float"

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def schedule_options(brokers_help: str, max_violations: int, shrink_help: str, shrink_budget: float) -> Callable:
    """The options of a fuzzer of broker schedules (`fuzz reconfig`, `conform broker`): the network, the
    schedules, the budget, and where the shrunk violations go."""
    options = [
        click.option("--brokers", type=click.IntRange(1, 10_000), default=6, show_default=True, help=brokers_help),
        click.option("--subscriptions", type=click.IntRange(0, MAX_COUNT), default=8, show_default=True,
                     help="About twice the clients: clients = max(1, N // 2), spread at random."),
        click.option("--churn", type=FiniteFloat(0.0, 1.0), default=0.1, show_default=True, help="Share of operations that change the overlay."),
        click.option("--steps", type=click.IntRange(1, MAX_COUNT), default=60, show_default=True,
                     help="Operations per schedule (then a final quiesce)."),
        click.option("--seed", type=int, default=0, show_default=True, help="Schedule i uses seed + i."),
        click.option("--budget", type=FiniteFloat(0.1), default=30.0, show_default=True, help="Seconds to fuzz."),
        click.option("--schedules", type=click.IntRange(1, MAX_COUNT), default=None, help="Stop after this many schedules."),
        click.option("--max-violations", type=click.IntRange(1, MAX_COUNT), default=max_violations, show_default=True,
                     help="Stop after this many violations."),
        click.option("--out-dir", "out_dir", type=click.Path(file_okay=False), callback=writable_dir, default="fuzz-replays",
                     show_default=True, help="Where replay files go."),
        click.option("--shrink-budget", type=FiniteFloat(0.0, 3600.0), default=shrink_budget, show_default=True, help=shrink_help),
    ]

    def apply(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command

    return apply



def timeout_options(fn: Callable) -> Callable:
    fn = click.option("--sub-timeout", type=FiniteFloat(0.0), default=5000.0, show_default=True,
                      help="Informed link activation: simulated ms before held-back subscriptions are reconsidered.")(fn)
    return click.option("--defer-timeout", type=FiniteFloat(0.0), default=3000.0, show_default=True,
                        help="Deferred unsubscriptions: simulated ms before the waiting UNSUBs run (0 is Strawman).")(fn)


def topology_option(fn: Callable) -> Callable:
    return click.option("--topology", default="random-tree", show_default=True, callback=_check_topology,
                        help=f"{', '.join(TOPOLOGIES)}, or a networkx edge-list FILE (cycles are cut to a BFS spanning tree).")(fn)


def _check_topology(_ctx, _param, value: str) -> str:
    """A named topology, or a file: a folder or a missing file is refused here;
    the file's content is read (with the input limits) when the work starts."""
    if value in TOPOLOGIES:
        return value
    if Path(value).is_dir():
        raise SubsumError(f"--topology {value}: is a directory; expected {', '.join(TOPOLOGIES)} or an edge-list file")
    if not Path(value).exists():
        raise SubsumError(f"--topology {value!r} is neither {', '.join(TOPOLOGIES)} nor an existing file")
    return value
