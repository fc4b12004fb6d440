"""subsum trace-check: trace conformance on Spark (spec/07-pipeline.md)."""

from __future__ import annotations

import math
import os
import stat
import time
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from subsum.cli.common.console import emit, err, out, write_json
from subsum.cli.common.options import format_option, spark_options, writable_dir
from subsum.cli.common.progress import heartbeat, is_quiet, quiet_option
from subsum.core.errors import CheckFailed, InputError, SubsumError
from subsum.impl.spark.session import job_frame, session_for


def _seconds(low: float):
    """Seconds from `low` to a billion: a window below a microsecond would split
    the trace's millisecond times into more windows than Spark can count."""
    def check(_ctx, param, value: float) -> float:
        if not (math.isfinite(value) and low <= value <= 1e9):
            raise SubsumError(f"--{param.name} must be a number of seconds from {low:g} to 1e9, got {value}")
        return value

    return check


def check_trace_path(path: str) -> None:
    """What can be told of a local trace before Spark starts (seconds): that it exists, is not a folder or a FIFO,
    and is not empty (its first byte is read: a device such as /dev/zero goes on to the line limit)."""
    if "://" in path:
        return
    if not os.path.lexists(path):
        raise InputError(path, None, None, "no such file")
    if os.path.isdir(path):
        raise InputError(path, None, None, "is a directory; expected a trace file (JSON lines, spec/05-network.md DEF-NET-9)")
    if stat.S_ISFIFO(os.stat(path).st_mode):
        raise InputError(path, None, None, "is a FIFO; expected a trace file that Spark can read")
    with open(path, "rb") as handle:
        if not handle.read(1):
            raise InputError(path, None, None, "the file is empty; a trace has one JSON object per line")


@click.command("trace-check")
@click.argument("trace_path", metavar="TRACE", type=click.Path())
@click.option("--grace", type=float, required=True, callback=_seconds(0.0),
              help="Grace window in seconds (the trace's times are milliseconds: 0.05 = 50 ms).")
@click.option("--window", type=float, default=1.0, show_default=True, callback=_seconds(1e-6),
              help="Width in seconds of the time windows the report counts violations in.")
@click.option("--out-dir", "out_dir", type=click.Path(file_okay=False), callback=writable_dir,
              help="Write violations.parquet and summary.json into DIR.")
@format_option
@spark_options
@quiet_option
def trace_check(trace_path, grace, window, out_dir, fmt, master, spark_conf, spark_timeout):
    """Check a simulator trace (DEF-NET-9) for duplicate, spurious and missed
    deliveries (spec/07-pipeline.md DEF-TRACE-3) on Spark.

    Exits 0 when the trace has no violation, 1 when it has any, 2 on bad
    input, 3 when a Spark job fails."""
    check_trace_path(trace_path)
    from subsum.impl.spark import trace as strace  # pyspark: loaded only here

    started = time.perf_counter()
    spark = session_for(master, spark_conf, inputs=(trace_path,), progress=err.is_terminal and not is_quiet())
    with job_frame(spark, spark_timeout), heartbeat(f"checking {trace_path} on Spark", spinner=False):
        report = strace.check(strace.read_trace(spark, trace_path), grace * 1000.0, window * 1000.0)
        summary = strace.summary(report, trace_path, grace, window)
        summary["seconds"] = round(time.perf_counter() - started, 3)
        if out_dir:
            Path(out_dir).mkdir(parents=True, exist_ok=True)
            strace.write_violations(report, str(Path(out_dir) / "violations.parquet"))
            write_json(Path(out_dir) / "summary.json", summary)
    emit(summary, fmt, lambda: print_summary(summary, report, strace.CAUSES, grace, window, out_dir))
    if not summary["ok"]:
        raise CheckFailed(f"{sum(report.counts.values()):,} violations in {trace_path}")


def print_summary(summary: dict, report, causes: tuple[str, ...], grace: float, window: float, out_dir: str | None) -> None:
    """The text report: violations by cause, the first windows holding some, and the record counts."""
    table = Table(title=f"trace-check, grace {grace:g} s", min_width=36)
    table.add_column("cause")
    table.add_column("violations", justify="right")
    for cause in causes:
        table.add_row(cause, f"{report.counts[cause]:,}")
    out.print(table)
    shown = [w for w in summary["windows"] if any(w[c] for c in causes)][:20]
    if shown:
        by_window = Table(title=f"per {window:g} s window (first {len(shown)} with violations)")
        by_window.add_column("window start (ms)", justify="right")
        for cause in causes:
            by_window.add_column(cause, justify="right")
        for w in shown:
            by_window.add_row(f"{w['window_start_ms']:g}", *(f"{w[c]:,}" for c in causes))
        out.print(by_window)
    totals = report.totals
    out.print(f"{totals['records']:,} records: {totals['publications']:,} publications, {totals['deliveries']:,} deliveries, "
              f"{totals['subscribe_records']:,} subscribes, {totals['unsubscribe_records']:,} unsubscribes"
              + (f"; results in {escape(out_dir)}" if out_dir else ""), highlight=False)


COMMANDS = (trace_check,)
