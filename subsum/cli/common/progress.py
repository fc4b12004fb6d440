"""Progress of a long run (README, "Command-line conventions"), on standard
error so that a report on standard output stays clean:

- on a terminal, one live rich line, gone when the run ends;
- in a log (standard error is not a terminal), a plain line at most every
  `LOG_EVERY` seconds, so that a CI log shows the run is alive;
- nothing with `--quiet`.

`progress(title, total)` is for a run that reports as it goes (explore's
layers, fuzz's schedules); `heartbeat(doing)` for one long step that cannot
(numba compiling the kernels): a thread says it is still at it.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

import click
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from subsum.cli.common.console import err, say

#: Seconds between two progress lines in a log: 10, or what $SUBSUM_PROGRESS_SECONDS says (a test's quicker pulse).
LOG_EVERY = float(os.environ.get("SUBSUM_PROGRESS_SECONDS") or 10.0)

_quiet: contextvars.ContextVar[bool] = contextvars.ContextVar("quiet", default=False)


def set_quiet(_ctx, _param, value: bool) -> bool:
    """The `--quiet` option's callback."""
    _quiet.set(bool(value))
    return value


def quiet_option(fn: Callable) -> Callable:
    """`--quiet`: no progress lines (the report and errors are printed as always)."""
    return click.option("--quiet", "-q", is_flag=True, expose_value=False, callback=set_quiet, is_eager=True,
                        help="Print no progress (on a terminal a live line; in a log a line every 10 s).")(fn)


def is_quiet() -> bool:
    return _quiet.get()


class Ticker:
    """What a run reports as it goes: `update(completed, description)`."""

    def __init__(self, title: str, total: float | None, bar: Progress | None, every: float) -> None:
        self.title, self.total, self.bar, self.every = title, total, bar, every
        self.started = self.last = time.monotonic()
        self.task = bar.add_task(title, total=total) if bar is not None else None

    def update(self, completed: float | None = None, description: str = "") -> None:
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=completed, description=description or self.title)
            return
        now = time.monotonic()
        if self.every and now - self.last >= self.every:
            self.last = now
            say(f"{self.title}: {description} ({now - self.started:.0f} s)")


@contextmanager
def progress(title: str, total: float | None = None) -> Iterator[Ticker]:
    """A Ticker for the run inside the block: a live line on a terminal, a line every LOG_EVERY seconds in a log,
    nothing when quiet."""
    if is_quiet() or not err.is_terminal:
        yield Ticker(title, total, None, 0.0 if is_quiet() else LOG_EVERY)
        return
    columns = [TextColumn("[progress.description]{task.description}"), BarColumn() if total else SpinnerColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=err, transient=True) as bar:
        yield Ticker(title, total, bar, LOG_EVERY)


@contextmanager
def heartbeat(doing: str, after: float = 2.0, spinner: bool = True) -> Iterator[None]:
    """While the block runs: once it has taken `after` seconds, say `doing` on a terminal (a spinner); in a log,
    once it has taken LOG_EVERY seconds (or `after`, if longer), a line, then a line every LOG_EVERY seconds until
    it ends. Nothing when quiet, or when it ends sooner;
    `spinner` False: nothing on a terminal either (where the work draws its own progress, as Spark does)."""
    if is_quiet() or (err.is_terminal and not spinner):
        yield
        return
    done = threading.Event()
    started = time.monotonic()

    def beat() -> None:
        if done.wait(after):
            return
        if err.is_terminal:
            with err.status(doing):
                done.wait()
            return
        if done.wait(max(0.0, LOG_EVERY - after)):  # in a log, the first line comes after LOG_EVERY seconds, as the others
            return
        say(f"{doing} ...")
        while not done.wait(LOG_EVERY):
            say(f"{doing}: still at it ({time.monotonic() - started:.0f} s)")

    thread = threading.Thread(target=beat, name="subsum-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
