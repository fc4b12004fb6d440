"""The options commands share, each written once (README, "Command-line
conventions"):

- `--output FILE`: the command's main output (default: standard output);
- `--out-dir DIR`: a folder of outputs (benchmarks, replays);
- `--format text|json`: how a report is printed on standard output;
- `--seed N`: the seed of everything random (every benchmark has one);
- `--json FILE`: only where standard output carries data (`match`), the
  report to a file; elsewhere a deprecated spelling of `--format json`.

Paths are checked before the work starts (exit 2, nothing done).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Callable

import click

from subsum.core import plugins
from subsum.core.errors import InputError, SubsumError
from subsum.core.outputs import check_output_folder, check_output_path

#: The largest count an option takes (events, subscriptions, steps, ...): far
#: beyond a useful run, and small enough that a typo cannot ask for years.
MAX_COUNT = 100_000_000

#: Where benchmarks write unless told otherwise (ignored by git); `--out-dir
#: benchmarks/results` refreshes the committed results.
BENCH_SCRATCH = "bench-out"

FORMATS = ("text", "json")


def writable_path(_ctx, param, value: str | None) -> str | None:
    """An output file is checked before the work starts (exit 2, nothing done);
    the error names the option. A URI (hdfs://, s3a://) is Spark's to check; a
    .parquet output is a folder Spark writes (and replaces)."""
    if value is not None and "://" not in value:
        try:
            check_output_path(value, folder_ok=value.rstrip("/").endswith(".parquet"))
        except InputError as exc:
            raise SubsumError(f"{option_name(param)} {value}: {exc.message}") from None
    return value


def option_name(param) -> str:
    """How an option is spelled on the command line (`--out-dir`), for an error that names it."""
    return param.opts[0] if getattr(param, "opts", None) else f"--{param.name.replace('_', '-')}"


def writable_dir(_ctx, param, value: str | None) -> str | None:
    """An output folder: an existing folder files can be made in, or one that
    can be made (`check_output_folder` tries both and leaves nothing behind).
    Checked before the work starts, so a finding is never lost to a bad folder."""
    if value is None or "://" in value:
        return value
    try:
        check_output_folder(value)
    except InputError as exc:
        raise SubsumError(f"{option_name(param)} {value}: {exc.message}") from None
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


def json_option(help_text: str) -> Callable:
    """`--json FILE`, for a command whose standard output carries data (`match`)."""
    return click.option("--json", "json_path", type=click.Path(dir_okay=False), callback=writable_path, help=help_text)


def deprecated_json_option(fn: Callable) -> Callable:
    """`--json FILE`, kept for one release where `--format json` replaces it (hidden)."""
    return click.option("--json", "json_path", type=click.Path(dir_okay=False), callback=writable_path, hidden=True,
                        help="Deprecated: the report as JSON to FILE; use --format json.")(fn)


def format_option(fn: Callable) -> Callable:
    return click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
                        help="Print the report as text (tables) or as one JSON document.")(fn)


def seed_option(default: int, help_text: str) -> Callable:
    return click.option("--seed", type=int, default=default, show_default=True, help=help_text)


def bench_out_dir_option(name: str, files: str) -> Callable:
    return click.option("--out-dir", "out_dir", type=click.Path(file_okay=False), default=BENCH_SCRATCH, show_default=True,
                        callback=writable_dir, help=f"Write {files} into DIR/{name}/. `--out-dir benchmarks/results` refreshes the committed results.")


def replay_dir_option(default: Path, help_text: str = "Where replays go.") -> Callable:
    return click.option("--out-dir", "out_dir", type=click.Path(file_okay=False), callback=writable_dir, default=str(default),
                        show_default=True, help=help_text)


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


class ComponentName(click.ParamType):
    """A built-in name from `choices`, or a plug-in (spec/11-plugins.md): an
    installed entry point of `kind` or module:attribute. A plug-in is loaded
    here with `load` (the kind's loader: it imports the class and checks its
    shape), so that what is wrong with it is a usage error naming the option
    (exit 2), before any work."""

    name = "component"

    def __init__(self, kind: str, choices: tuple[str, ...], load: Callable[[str], object] | None = None) -> None:
        self.kind, self.choices, self.load = kind, tuple(choices), load

    def get_metavar(self, param, *args, **kwargs) -> str:  # click >= 8.2 passes ctx
        return "[" + "|".join(self.choices) + "|MODULE:ATTRIBUTE]"

    def convert(self, value, param, ctx):
        if value in self.choices:
            return value
        if not (plugins.looks_like_path(value) or value in plugins.entry_points(self.kind)):
            self.fail(f"{value!r} is not one of {', '.join(self.choices)}, an installed {plugins.GROUPS[self.kind]} entry point, "
                      "or a plug-in named as module:attribute", param, ctx)
        if self.load is not None:
            try:
                self.load(value)
            except SubsumError as exc:
                self.fail(str(exc), param, ctx)
        return value


class FiniteFloat(click.FloatRange):
    """A float option in a range that also refuses nan and ±inf (click's FloatRange lets nan through)."""

    name = "finite float"

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


class StepsOrEver(click.ParamType):
    """A number of steps ≥ 0, or "ever" (None): SS's memory of requesters (`--ss-memory`)."""

    name = "steps|ever"

    def convert(self, value, param, ctx):
        if value is None or (isinstance(value, str) and value.strip().lower() == "ever"):
            return None
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        try:
            steps = int(str(value).strip())
        except ValueError:
            self.fail(f"{value!r} is neither a whole number of steps >= 0 nor 'ever'", param, ctx)
        if steps < 0:
            self.fail(f"{value!r} is negative; give a whole number of steps >= 0 or 'ever'", param, ctx)
        return steps


def apply_options(options: list[Callable]) -> Callable:
    """One decorator of several options, listed in the order `--help` shows them."""
    def apply(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def schedule_options(brokers_help: str, max_violations: int, shrink_help: str, shrink_budget: float, out_dir: Path,
                     keep_going: bool = False) -> Callable:
    """The options of a fuzzer of broker schedules (`fuzz reconfig`, `conform broker`): the network, the
    schedules, the budget, and where the shrunk violations go. With `keep_going` (`conform broker`) the
    violation limit is `--keep-going N`, which counts violations that differ (DEF-PLUG-8)."""
    limit = (click.option("--keep-going", "max_violations", type=click.IntRange(1, 1000), default=max_violations, show_default=True,
                          metavar="N", help="Go on after a violation until N violations that differ (in claim and in the request "
                                            "the broker got wrong) are found, each shrunk and saved; one like a violation "
                                            "already found is counted, not saved again.")
             if keep_going else
             click.option("--max-violations", type=click.IntRange(1, MAX_COUNT), default=max_violations, show_default=True,
                          help="Stop after this many violations."))
    return apply_options([
        click.option("--brokers", type=click.IntRange(1, 10_000), default=6, show_default=True, help=brokers_help),
        click.option("--subscriptions", type=click.IntRange(0, MAX_COUNT), default=8, show_default=True,
                     help="About twice the clients: clients = max(1, N // 2), spread at random."),
        click.option("--churn", type=FiniteFloat(0.0, 1.0), default=0.1, show_default=True, help="Share of operations that change the overlay."),
        click.option("--steps", type=click.IntRange(1, MAX_COUNT), default=60, show_default=True,
                     help="Operations per schedule (then a final quiesce)."),
        click.option("--seed", type=click.IntRange(-(2**63), 2**63 - 1 - MAX_COUNT), default=0, show_default=True,
                     help="Schedule i uses seed + i (a replay file holds a 64-bit seed)."),
        click.option("--budget", type=FiniteFloat(0.1), default=30.0, show_default=True, help="Seconds to fuzz."),
        click.option("--schedules", type=click.IntRange(1, MAX_COUNT), default=None, help="Stop after this many schedules."),
        limit,
        replay_dir_option(out_dir, "Where replay files go."),
        click.option("--shrink-budget", type=FiniteFloat(0.0, 3600.0), default=shrink_budget, show_default=True, help=shrink_help),
    ])
