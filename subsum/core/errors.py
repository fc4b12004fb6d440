"""One error hierarchy for every failure subsum expects (spec/formats.md,
"Exit codes and errors").

Every expected failure is a `SubsumError`. The CLI catches it in one place
(`subsum.cli.Subsum.invoke`), prints `error: <message>` on one line and exits with
the error's `exit_code`:

- 1: a check found a violation or a difference (`CheckFailed`);
- 2: bad input or usage (`InputError`, and every other `SubsumError`);
- 3: an internal or engine failure (`EngineError`);
- 130: Ctrl-C ended the run (`Interrupted`, or a KeyboardInterrupt no command caught).

Anything else that escapes a command is a bug: the CLI prints one line and
a hint to rerun with `--debug` (which shows the traceback), and exits 3.

>>> str(InputError("subs.jsonl", 3, "filter", "unknown operator '=>'"))
"subs.jsonl:3: field 'filter': unknown operator '=>'"
>>> str(InputError("trace.jsonl", None, None, "empty file"))
'trace.jsonl: empty file'
"""

from __future__ import annotations


class SubsumError(Exception):
    """A failure subsum expects and reports as one line; `exit_code` is the CLI's exit status.
    `context`: optional lines printed, indented, under the error line (a filter with a caret)."""

    exit_code = 2
    context: tuple[str, ...] = ()


class InputError(SubsumError, ValueError):
    """Bad input: `path:line: field 'f': message`. `line` is the 1-based line
    (or, for Parquet, the 1-based row); `field` the JSON field at fault, or
    None when the whole line or file is."""

    def __init__(self, path: str, line: int | None, field: str | None, message: str) -> None:
        self.path, self.line, self.field, self.message = str(path), line, field, message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        if self.field:
            return f"{where}: field '{self.field}': {self.message}"
        return f"{where}: {self.message}"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and str(other) == str(self)

    def __hash__(self) -> int:
        return hash(str(self))


class CheckFailed(SubsumError):
    """A check ran and found a violation or a difference (exit 1)."""

    exit_code = 1


class Interrupted(SubsumError):
    """Ctrl-C ended the run (exit 130, the shell's code for SIGINT): the command
    printed what it had done and saved what it had found; the message says so."""

    exit_code = 130


class EngineError(SubsumError):
    """An engine failed while doing its work, e.g. a Spark job died (exit 3)."""

    exit_code = 3
