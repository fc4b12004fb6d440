"""The options `subsum conform matching` and `subsum conform broker` share
(spec/11-plugins.md DEF-PLUG-7, DEF-PLUG-8), and the matching report:
what was checked and what was not, then either the pass or one row per
distinct failure with its replay."""

from __future__ import annotations

import contextlib
import shlex
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

import click

from subsum.cli.common.console import line
from subsum.cli.common.options import MAX_COUNT, FiniteFloat, writable_path
from subsum.conformance.kit.matching import is_number
from subsum.conformance.kit.pinned import boundary_workloads, hostile_workloads, pinned_workloads
from subsum.conformance.kit.profile import FEATURES, OPERATORS, Profile, parse_unsupported
from subsum.conformance.runner.reports import kit_junit_xml
from subsum.core.errors import SubsumError

UNSUPPORTED_HELP = ("What the implementation does not support, never sent and reported as not checked: a comma-separated list "
                    f"of operators ({', '.join(OPERATORS)}; or eq, ne, lt, le, gt, ge), types (int, float, string, bool) and "
                    f"features ({', '.join(FEATURES)}), or a TOML profile file (FILE.toml, spec/11-plugins.md DEF-PLUG-7).")


def _profile(_ctx, _param, value: str | None) -> Profile:
    return parse_unsupported(value)  # a ConformError names the option or the file (exit 2)


def kit_options(command: Callable) -> Callable:
    """--unsupported, --keep-going, --only, --stderr-log and --shrink-budget (`conform matching`)."""
    return _kit_options(command, matching=True)


def broker_kit_options(command: Callable) -> Callable:
    """--unsupported, --only and --stderr-log (`conform broker`; its --keep-going and --shrink-budget come with
    the schedule options)."""
    return _kit_options(command, matching=False)


def _kit_options(command: Callable, matching: bool) -> Callable:
    only_help = ("Run only generated workload I of the seed (as a report names it: \"seed S, workload I\"), or the pinned "
                 "workload NAME." if matching else "Run only schedule I (its seed is SEED + I; a report names it \"seed S, "
                 "schedule I\").")
    options = [
        click.option("--unsupported", metavar="LIST|FILE.toml", callback=_profile, help=UNSUPPORTED_HELP),
        click.option("--keep-going", "keep_going", type=click.IntRange(1, 1000), default=1, show_default=True, metavar="N",
                     help="Go on after a failure until N failures that differ in kind, direction and what they use are found, "
                          "each shrunk and saved; a failure like one already found is counted, not saved again."),
        click.option("--only", metavar="I|NAME" if matching else "I", help=only_help),
        click.option("--stderr-log", "stderr_log", type=click.Path(dir_okay=False), callback=writable_path, metavar="FILE",
                     help="Keep everything the implementation writes to standard error in FILE, each workload headed by a line "
                          "that names it, whether the run passes or fails."),
        click.option("--shrink-budget", "shrink_budget", type=FiniteFloat(0.0, 3600.0), default=60.0, show_default=True,
                     help="Seconds to shrink each new failure (0: save it as found)."),
    ]
    options.append(click.option("--junit", "junit_path", type=click.Path(dir_okay=False), callback=writable_path, metavar="FILE",
                                help="Also write JUnit XML to FILE: a test case for the run, a failing one per distinct failure, "
                                     "and a skipped one per type, operator and feature not checked."))
    if not matching:
        options = [options[0], options[2], options[3], options[5]]
    for option in reversed(options):
        command = option(command)
    return command


def check_only(only: str | None, profile: Profile) -> None:
    """`--only`: a workload number, or the name of a pinned workload the profile admits (exit 2 otherwise)."""
    if only is None:
        return
    if is_number(only):
        if int(only) >= MAX_COUNT:
            raise SubsumError(f"--only {only}: a workload number below {MAX_COUNT:,}")
        return
    names = [name for name, _ in boundary_workloads() + hostile_workloads()]
    if only not in names:
        raise SubsumError(f"--only {only!r}: not a workload number or a pinned workload; pinned: {', '.join(names)}")
    if only not in [name for name, _ in pinned_workloads(profile)]:
        raise SubsumError(f"--only {only}: that pinned workload uses what --unsupported leaves out")


@contextlib.contextmanager
def open_log(path: str | None) -> Iterator[BinaryIO | None]:
    """The --stderr-log file, opened (and emptied) for the run; None without one."""
    if path is None:
        yield None
        return
    try:
        open(path, "wb").close()  # emptied; then appended to, by subsum's headers and a persistent engine alike
        log = open(path, "ab")  # noqa: SIM115 (closed below, after the engine)
    except OSError as exc:
        raise SubsumError(f"--stderr-log {path}: {exc.strerror or exc}") from None
    with log:
        yield log


def write_junit(path: str | None, report: dict, title: str) -> None:
    if path is not None:
        try:
            Path(path).write_text(kit_junit_xml(report, title), encoding="utf-8")
        except OSError as exc:
            raise SubsumError(f"--junit {path}: {exc.strerror or exc}") from None


def run_options(profile: Profile, timeout: float) -> str:
    """The options a rerun needs besides the engine's: the profile (workload I is drawn within it) and a time-out
    other than the default."""
    declared = profile.as_option()
    return (f" --unsupported {shlex.quote(declared)}" if declared else "") + (f" --timeout {timeout:g}" if timeout != 10.0 else "")


def matching_report(result, engine: dict, seed: int, option: str, stderr_log: str | None) -> dict:
    """The JSON report of `subsum conform matching` (the text one prints from it)."""
    def rerun(found_at: str) -> str:
        label = found_at.removeprefix("workload ").removeprefix("pinned ")
        return f"subsum conform matching {option}{run_options(result.profile, engine['timeout'])} --seed {seed} --only {label}"

    findings = [{**f.to_json(None if f.replay is None else f"subsum replay {option} {f.replay}"), "rerun": rerun(f.found_at)}
                for f in result.findings]
    first = findings[0] if findings else None
    return {"engine": engine, **result.profile.to_json(result.exercised), "headline": result.profile.headline(result.exercised),
            "workloads": result.workloads,
            "pinned": result.pinned, "generated": result.generated, "seed": seed, "seconds": round(result.seconds, 3),
            "interrupted": result.interrupted, "findings": findings, "stderr_log": stderr_log,
            "failure": None if first is None else {"kind": first["kind"], "message": first["message"]},
            "replay": None if first is None else first["replay"], "replay_command": None if first is None else first["replay_command"]}


def print_conformance(name: str, report: dict) -> None:
    line(report["headline"])
    plural = "" if report["workloads"] == 1 else "s"
    counts = (f"{report['workloads']:,} workload{plural} ({report['pinned']} pinned, {report['generated']:,} generated; "
              f"seed {report['seed']}, {report['seconds']:.1f} s)")
    if not report["findings"]:
        line(f"{name}: no failure in the {counts} run before Ctrl-C" if report["interrupted"] else
             f"{name}: agrees with the model on {counts}")
    else:
        line(f"{name}: {len(report['findings'])} distinct failure{'s' if len(report['findings']) > 1 else ''} in {counts}")
        line(f"  {'#':>2}  {'kind':<17} {'direction':<16} {'uses':<30} {'declare':<15} {'seen':>5}  first found at")
        for k, f in enumerate(report["findings"], 1):
            line(f"  {k:>2}  {f['kind']:<17} {f['direction']:<16} {', '.join(f['traits']) or '-':<30} {f['declare'] or '-':<15} "
                 f"{f['seen']:>5}  seed {report['seed']}, {f['found_at']}")
        for k, f in enumerate(report["findings"], 1):
            line(f"  {k}. {name}: {f['kind']}: {f['message']}")
            line(f"     shrunk workload in {f['replay']}")
            line(f"     replay: {f['replay_command']}")
            line(f"     rerun:  {f['rerun']}")
    if report["stderr_log"]:
        line(f"  the engine's standard error: {report['stderr_log']}")
