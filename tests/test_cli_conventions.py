"""One CLI grammar (README, "Command-line conventions"), enforced by walking
the click command tree:

- every command that prints a report takes `--format text|json`; the
  commands whose standard output carries data (match results, a summary,
  a normal form) or that print nothing but a status line are named below;
- `--json FILE` only where standard output carries data (visible), and
  elsewhere only as the hidden, deprecated spelling of `--format json`;
- every benchmark takes `--seed`, `--out-dir`, `--quick` and `--format`;
- every simulation takes `--seed`, `--topology`, `--brokers` and `--format`;
- `--output` names a file and `--out-dir` a folder, wherever they appear;
- no visible `--check` (one command took it as a flag, another as a folder);
- `--help` of every command, hidden ones too, prints its usage.
"""

from __future__ import annotations

import os
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from subsum.cli import main

#: commands whose standard output carries data, not a report: the only ones without --format, and the only ones with a visible --json
DATA = {("match",), ("check-filter",), ("summary", "build"), ("summary", "match"), ("summary", "merge")}


def commands(group: click.Group = main, path: tuple[str, ...] = ()):
    """(path, command) of every command and group, hidden ones too (a group
    may load its commands lazily: ask it, as click does)."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None and command.name == name, f"{path + (name,)}: the group lists a command it cannot load"
        yield path + (name,), command
        if isinstance(command, click.Group):
            yield from commands(command, path + (name,))


def leaves(hidden: bool = False):
    return [(path, c) for path, c in commands() if not isinstance(c, click.Group) and (hidden or not c.hidden)]


def option(command: click.Command, name: str) -> click.Option | None:
    return next((p for p in command.params if isinstance(p, click.Option) and name in p.opts), None)


def test_the_tree_is_what_the_grammar_speaks_of():
    paths = {path for path, _ in commands()}
    assert {("simulate", name) for name in ("forwarding", "summaries", "siena", "broadcast", "flooding", "caching", "client-server")} <= paths
    assert {("conform", "vectors", "write"), ("conform", "vectors", "check"), ("replay",), ("fuzz", "reconfig")} <= paths
    assert len(leaves()) >= 30


@pytest.mark.parametrize("path, command", leaves(), ids=lambda x: " ".join(x) if isinstance(x, tuple) else "")
def test_every_report_takes_format(path, command):
    fmt = option(command, "--format")
    if path in DATA:
        assert fmt is None, f"{' '.join(path)} prints data, not a report"
        return
    assert fmt is not None, f"subsum {' '.join(path)} prints a report but takes no --format"
    assert isinstance(fmt.type, click.Choice) and tuple(fmt.type.choices) == ("text", "json") and fmt.default == "text"


@pytest.mark.parametrize("path, command", leaves(hidden=True), ids=lambda x: " ".join(x) if isinstance(x, tuple) else "")
def test_json_file_only_where_stdout_carries_data(path, command):
    json_file = option(command, "--json")
    if json_file is not None and path not in DATA:
        assert json_file.hidden, f"subsum {' '.join(path)}: --json FILE is visible; its report goes to stdout with --format json"


@pytest.mark.parametrize("path, command", [(p, c) for p, c in leaves() if p[0] == "bench"], ids=lambda x: " ".join(x) if isinstance(x, tuple) else "")
def test_every_bench_takes_seed_out_dir_quick_and_format(path, command):
    for name in ("--seed", "--out-dir", "--quick", "--format"):
        assert option(command, name) is not None, f"subsum {' '.join(path)} has no {name}"


@pytest.mark.parametrize("path, command", [(p, c) for p, c in leaves() if p[0] == "simulate"], ids=lambda x: " ".join(x) if isinstance(x, tuple) else "")
def test_every_simulation_takes_the_common_options(path, command):
    for name in ("--seed", "--topology", "--brokers", "--format"):
        assert option(command, name) is not None, f"subsum {' '.join(path)} has no {name}"


@pytest.mark.parametrize("path, command", leaves(hidden=True), ids=lambda x: " ".join(x) if isinstance(x, tuple) else "")
def test_output_is_a_file_out_dir_a_folder_and_no_visible_check(path, command):
    output, out_dir, check = option(command, "--output"), option(command, "--out-dir"), option(command, "--check")
    if output is not None:
        assert isinstance(output.type, click.Path) and not output.type.dir_okay, f"{' '.join(path)}: --output must name a file"
    if out_dir is not None:
        assert isinstance(out_dir.type, click.Path) and not out_dir.type.file_okay, f"{' '.join(path)}: --out-dir must name a folder"
    assert check is None or check.hidden, f"subsum {' '.join(path)} has a visible --check"


@pytest.mark.parametrize("path", [path for path, _ in commands()], ids=" ".join)
def test_every_command_has_help(path):
    """`--help` of every command and subcommand prints its usage (a custom
    option type once crashed it: click passes `ctx` to get_metavar)."""
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output, result.output


def test_a_command_breaking_the_grammar_is_caught(monkeypatch):
    """The checks bite: a report command that lost --format, and a visible --json."""
    broken = click.Command("broken", params=[click.Option(["--json"], type=click.Path(dir_okay=False))], callback=lambda **_: None)
    with pytest.raises(AssertionError, match="takes no --format"):
        test_every_report_takes_format(("broken",), broken)
    with pytest.raises(AssertionError, match="--json FILE is visible"):
        test_json_file_only_where_stdout_carries_data(("broken",), broken)


@pytest.mark.parametrize("protocol, code", [("strawman", 0), ("subsum.bench.planted:ForgetfulStrawman", 1)])
def test_a_reader_that_stops_early_leaves_the_exit_code_to_the_check(tmp_path, protocol, code):
    """`subsum explore | head -1`: the text report meets a closed pipe. The command still ends with its own exit code
    (0: no violation, 1: one), not rich's SystemExit(1) reported as a plug-in calling sys.exit. The pipe's reader is
    closed before the command starts, so every write meets it (a reader closing later races the writes)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    command = [sys.executable, "-m", "subsum", "explore", "--protocol", protocol, "--brokers", "3", "--subscriptions", "2",
               "--events", "1", "--out-dir", str(tmp_path)]
    try:
        result = subprocess.run(command, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert result.returncode == code, result.stderr
    assert "sys.exit" not in result.stderr and "Traceback" not in result.stderr


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:3])


def old_spellings_left(cli_root) -> list[str]:
    """The CLI modules that still call `deprecated` (an old spelling kept for its last release)."""
    return sorted(str(p.relative_to(cli_root)) for p in cli_root.rglob("*.py")
                  if p.name != "console.py" and "deprecated(" in p.read_text(encoding="utf-8"))


def test_the_old_spellings_are_gone_by_the_release_they_name():
    """Each deprecation note names OLD_SPELLINGS_GO_IN; a version at or past it with an old spelling left fails
    (planted: pyproject.toml at 0.2.0 fails it)."""
    import tomllib
    from pathlib import Path

    from subsum.cli.common.console import OLD_SPELLINGS_GO_IN

    root = Path(__file__).resolve().parents[1]
    version = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    left = old_spellings_left(root / "subsum" / "cli")
    assert left, "no old spelling is left: remove OLD_SPELLINGS_GO_IN, this test and the README's paragraph"
    assert _release(version) < _release(OLD_SPELLINGS_GO_IN), f"release {version} drops the old spellings, still in {left}"
