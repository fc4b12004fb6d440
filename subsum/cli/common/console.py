"""What the commands print and how (README, "Command-line conventions"):
the two consoles, status lines, and reports as text or JSON.

Every command that prints a report builds it as one JSON-able dict and
hands it to `emit` with its `--format`: `json` prints the dict as one JSON
document on standard output, `text` prints what the command's renderer
draws (tables, lines). Progress and status go to standard error.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Callable

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from subsum.core.outputs import write_lines_atomically

class ReaderMayStop(Console):
    """A console whose reader may stop reading (`subsum explore | head -1`):
    the rest of what it prints goes nowhere and the command finishes with
    its own exit code. rich's default raises SystemExit(1), which here would
    mean "a check found a violation" (README, exit codes)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, (sys.stderr if self.stderr else sys.stdout).fileno())
        os.close(devnull)


out = ReaderMayStop(emoji=False)  # ':x:' in a file name stays ':x:'
err = ReaderMayStop(stderr=True, emoji=False)


def say(message: str) -> None:
    """A progress or status line on standard error, as given (no markup)."""
    err.print(escape(message), highlight=False, soft_wrap=True)


def line(message: str) -> None:
    """A line of a text report on standard output, as given (no markup)."""
    out.print(escape(message), highlight=False, soft_wrap=True)


def report_json(report: object) -> str:
    """A report as one JSON document (`--format json`)."""
    return json.dumps(report, indent=2, ensure_ascii=False, default=str)  # a path is written as its text


def emit(report: object, fmt: str, text: Callable[[], None]) -> None:
    """Print a report: as JSON on standard output, or as `text` draws it."""
    if fmt == "json":
        click.echo(report_json(report))
    else:
        text()


def write_json(path: str | Path, value: object) -> None:
    """Write a JSON report to a file, atomically."""
    write_lines_atomically(path, [report_json(value)])


def show_unsaved(errors) -> None:
    """Each finding whose replay could not be written (ReplayNotSaved): its error line, then the replay in full,
    on standard error, so that nothing found is lost."""
    for error in errors:
        err.print(f"[bold red]error:[/] {escape(str(error))}", highlight=False, soft_wrap=True)
        for text in error.context:
            err.print(escape(text), highlight=False, soft_wrap=True)


#: The release the old spellings go in (README, "The commands"): tests/test_cli_conventions.py fails
#: once pyproject.toml's version reaches it while the CLI still calls `deprecated`.
OLD_SPELLINGS_GO_IN = "0.2.0"


def deprecated(old: str, new: str) -> None:
    """The line an old spelling prints: it still works, until OLD_SPELLINGS_GO_IN."""
    err.print(f"note: `{escape(old)}` is deprecated and goes in release {OLD_SPELLINGS_GO_IN}; use `{escape(new)}`",
              highlight=False, soft_wrap=True)


def counter_table(title: str, values: dict) -> Table:
    table = Table(title=title)
    table.add_column("counter")
    table.add_column("value", justify="right")
    for key, value in values.items():
        shown = json.dumps(value) if isinstance(value, dict) else f"{value:,}" if isinstance(value, int) else str(value)
        table.add_row(escape(key), escape(shown))
    return table
