"""The README's tour is real output: every shown command whose output does not
depend on time or on a partial table is run here the way the page says, as
`subsum` on the PATH that `. .venv/bin/activate` sets (the folder of this
Python's console scripts), in a child process, and its output must equal the
README's lines. Commands run from a scratch directory that sees the
repository's examples/, so files they write (b.json) stay out of the tree."""

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[1]
README_ALL = (ROOT / "README.md").read_text(encoding="utf-8")
# The cluster recipe is a shell session (pipes, a variable), run literally by tests/test_cluster.py.
README = README_ALL[:README_ALL.index("### Try it: a cluster on this machine")] + README_ALL[README_ALL.index("### A real cluster"):]

# Output shown in full and not timed. Other tour commands show an excerpt of
# a table or a rate; their numbers are checked by the claims and benchmarks.
DETERMINISTIC = ("check-filter", "match --subscriptions", "summary build", "summary match", "summary stats --summary examples/bad",
                 "cache replay", "replay examples/caching")


def tour_commands() -> list[tuple[str, list[str]]]:
    """(command, shown output lines) for each indented `$ subsum ...` block of the README."""
    blocks, lines, i = [], README.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("    $ subsum "):
            command = line[len("    $ "):]
            while command.endswith("\\"):
                i += 1
                command = command[:-1].rstrip() + " " + lines[i].strip()
            output = []
            i += 1
            while i < len(lines) and lines[i].startswith("    ") and not lines[i].startswith("    $ "):
                output.append(lines[i][4:])
                i += 1
            blocks.append((command, output))
            continue
        i += 1
    return blocks


CASES = [(c, out) for c, out in tour_commands()
         if c.split(" ", 1)[1].startswith(DETERMINISTIC) and "--stats" not in c and "--engine" not in c]


BIN = Path(sys.executable).parent  # .venv/bin: what activating the venv puts first on PATH


def test_the_tour_has_the_commands_this_test_expects():
    assert len(CASES) >= 8, [c for c, _ in CASES]


def test_the_page_says_how_subsum_gets_on_path_before_the_tour_types_it():
    first_command = README.index("    $ subsum ")
    assert ". .venv/bin/activate" in README[:first_command] and ".venv/bin/subsum" in README[:first_command]
    assert (BIN / "subsum").is_file(), f"{BIN}/subsum: the console script the tour runs"


def shell_subsum(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """`subsum ARGV` as a shell with the venv activated runs it: found on PATH, on a 200-column terminal."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(["subsum", *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("command,shown", CASES, ids=[c[:60] for c, _ in CASES])
def test_tour_output_is_what_the_command_prints(command, shown, tmp_path):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    argv = shlex.split(command)[1:]
    if argv[:2] == ["summary", "match"] or argv[:2] == ["summary", "stats"] and "b.json" in argv:
        built = shell_subsum(["summary", "build", "--subscriptions", "examples/seed000/fig-4-5-subscriptions.jsonl", "--output", "b.json"],
                             tmp_path)
        assert built.returncode == 0, built.stderr
    result = shell_subsum(argv, tmp_path)
    printed = [line.rstrip() for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert printed == [line.rstrip() for line in shown], result.stdout + result.stderr
    assert result.returncode == (2 if shown[0].startswith("error:") else 0)
