"""The `subsum` command line (click + rich): one module per command group,
each parsing arguments and rendering output; the work is done below, in
`subsum.impl`, `subsum.conformance` and `subsum.bench`.

    claims.py    subsum verify | claims | prove
    match.py     subsum match | check-filter
    summary.py   subsum summary build | match | stats | merge | plan
    simulate.py  subsum simulate forwarding | summaries | siena | broadcast | flooding | caching | client-server
    fuzz.py      subsum fuzz reconfig
    explore.py   subsum explore
    replay.py    subsum replay
    cache.py     subsum cache replay
    pipeline.py  subsum trace-check
    bench.py     subsum bench matching | summaries | summary-routing | caching | client-server | network | reconfig | spark
    conform.py   subsum conform matching | broker | vectors write | vectors check

and `common/` (what every command shares: `console`, what is printed and
how, reports as text or JSON; `options`, the option grammar). A command parses, calls one
function below (subsum.app, .impl, .conformance, .bench) and renders.

Exit codes, enforced here and nowhere else (`guarded`):

    0  success
    1  a check found a violation or a difference (`CheckFailed`)
    2  bad input or usage (`InputError`, any other `SubsumError`, click's usage errors)
    3  an internal or engine failure (`EngineError`, a failed Spark job, a bug)
  130  Ctrl-C: the command printed what it had done and saved what it had found (`Interrupted`)

An expected failure prints `error: <message>` on one line, never a
traceback. An unexpected one prints one line and a hint to rerun with
`--debug`, which shows the traceback.
"""

from __future__ import annotations

import importlib

import click
from rich.markup import escape

from subsum.cli.common.console import err
from subsum.core.errors import CheckFailed, Interrupted, SubsumError
from subsum.core.inputs import DEFAULT_MAX_LINE_BYTES, set_max_line_bytes
from subsum.impl.spark import class_archive
from subsum.impl.spark.session import describe_failure

EXIT_OK, EXIT_VIOLATION, EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

#: each command -> the module of subsum.cli defining it (in its COMMANDS), imported only when the command runs or a
#: help page lists it (click's lazily loaded subcommands): `subsum match` does not load what `subsum bench` needs
COMMAND_MODULES = {"verify": "claims", "claims": "claims", "prove": "claims", "match": "match", "check-filter": "match",
                   "summary": "summary", "simulate": "simulate", "fuzz": "fuzz", "explore": "explore", "replay": "replay", "cache": "cache",
                   "trace-check": "pipeline", "bench": "bench", "conform": "conform", "vectors": "conform",
                   "fidelity": "fidelity"}


def engine_failure(exc: BaseException) -> bool:
    """A failure raised by the Spark engine (a failed job, a lost JVM)."""
    return any(klass.__module__.split(".")[0] in ("pyspark", "py4j") for klass in type(exc).__mro__)


def one_line(message: str) -> str:
    """A message on one line, with no control character: input can hold
    newlines and terminal escape sequences, which must not reach the terminal."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in " ".join(message.split()))


def show_usage_error(exc: click.exceptions.UsageError) -> None:
    """A usage error on one line, like every other error."""
    where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
    err.print(f"[bold red]error:[/] {escape(one_line(exc.format_message()))}{escape(where)}", highlight=False, soft_wrap=True)


def ended_well() -> None:
    """The command ran to its end (exit 0 or 1): a Spark session it started
    without the JVM's class archive has one built in the background
    (impl/spark/class_archive.py)."""
    class_archive.finish()


class Subsum(click.Group):
    """The top-level group: every command runs under one error handler, and
    is loaded when first needed (COMMAND_MODULES)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMAND_MODULES:
            return None
        module = importlib.import_module(f"subsum.cli.{COMMAND_MODULES[cmd_name]}")
        return next(command for command in module.COMMANDS if command.name == cmd_name)

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.exceptions.UsageError as exc:  # a bad option of `subsum` itself
            show_usage_error(exc)
            raise click.exceptions.Exit(exc.exit_code) from None

    def invoke(self, ctx: click.Context):
        try:
            result = super().invoke(ctx)
            ended_well()
            return result
        except click.exceptions.UsageError as exc:
            show_usage_error(exc)
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.exceptions.ClickException, click.exceptions.Abort):
            raise
        except SystemExit as exc:  # no subsum command exits so: a plug-in, or code it runs, called sys.exit
            said = f"sys.exit({exc.code!r}) was called inside subsum {ctx.invoked_subcommand} (by a plug-in?); the command did not finish"
            err.print(f"[bold red]error:[/] {escape(one_line(said))}", highlight=False, soft_wrap=True)
            ctx.exit(EXIT_INTERNAL)
        except (CheckFailed, Interrupted) as exc:  # the command has printed its report; this is its verdict
            if isinstance(exc, CheckFailed):
                ended_well()
            err.print(f"[bold red]{escape(str(exc))}[/]", highlight=False, soft_wrap=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:  # Ctrl-C in a command with nothing to report: no traceback, and not exit 1 ("violation")
            err.print("[bold red]interrupted[/] (Ctrl-C); nothing was written", highlight=False, soft_wrap=True)
            ctx.exit(EXIT_INTERRUPTED)
        except SubsumError as exc:
            err.print(f"[bold red]error:[/] {escape(one_line(str(exc)))}", highlight=False, soft_wrap=True)
            for line in exc.context:
                err.print(escape(line), highlight=False, soft_wrap=True)
            ctx.exit(exc.exit_code)
        except Exception as exc:  # a bug, or an engine failing: one line, the traceback only on request
            if ctx.obj and ctx.obj.get("debug"):
                raise
            if engine_failure(exc):
                said = f"the Spark engine failed: {describe_failure(exc)}"
            else:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                said = f"internal error: {type(exc).__name__}{': ' + first if first else ''}"
            err.print(f"[bold red]error:[/] {escape(one_line(said))}", highlight=False, soft_wrap=True)
            err.print("rerun with `subsum --debug ...` to see the traceback", highlight=False)
            ctx.exit(EXIT_INTERNAL)


@click.group(cls=Subsum, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="subsum")
@click.option("--debug", is_flag=True, help="Show the traceback of an unexpected failure.")
@click.option("--max-line-bytes", type=click.IntRange(1, 2**40), default=DEFAULT_MAX_LINE_BYTES, show_default=True,
              help="The longest line an input file may hold; a longer one is bad input (exit 2).")
@click.pass_context
def main(ctx: click.Context, debug: bool, max_line_bytes: int) -> None:
    """subsum: content-based publish/subscribe with every claim checked.

    The spec (spec/), the reference model (subsum.model) and the
    implementation (subsum.impl) are tied together by z3 proofs and
    Hypothesis checks. Start with `subsum verify` and `subsum claims`.

    \b
    Where the code is (a traceback's `subsum.X` is in the folder shown):
      subsum.model        model/        the executable reference
      subsum.impl         impl/         the optimized implementation
      subsum.conformance  conformance/  the checks tying them together
      subsum.core, .app, .bench, .fidelity, .cli   subsum/...

    Exit codes: 0 success, 1 a check found a violation or difference,
    2 bad input or usage, 3 an internal or engine failure, 130 Ctrl-C
    (what was found is saved and reported).
    """
    ctx.obj = {"debug": debug}
    set_max_line_bytes(max_line_bytes)


__all__ = ["main", "EXIT_OK", "EXIT_VIOLATION", "EXIT_INPUT", "EXIT_INTERNAL", "EXIT_INTERRUPTED"]
