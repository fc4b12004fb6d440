"""What subsum's users can observe of the network simulator, recorded so that
a redesign of its insides can be shown to change none of it (issue 52's rule:
"nothing observable changes").

    python scripts/observable_outputs.py record FILE   # run the commands, write their outputs to FILE
    python scripts/observable_outputs.py compare FILE  # run them again; exit 1 naming each that differs

The commands: `subsum simulate` of every simulation and every reconfiguration
protocol, with a trace; `subsum fuzz reconfig` of every protocol on several
seeds, with churn, and of the planted bugs (their replay files included);
`subsum explore` of every protocol it takes, bounded by states, and of a
planted bug (its replay included); `subsum replay` of those replays. Each runs
in a fresh process of `--python` (default: this one), so an earlier install
can record and this checkout compare. Figures that measure time (any key
naming seconds or a rate) are left out; everything else is kept byte for byte.
A JSON report may have gained fields since it was recorded (issue 53 added
explore's `local_steps`): those are named, not compared, and every field
that was recorded must be as it was.
Exit 2 on bad arguments, 1 when an output differs, 3 when a command fails in
a way it did not when recorded.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from subsum.core.errors import InputError
from subsum.core.outputs import check_output_path

PROTOCOLS = ("strawman", "timed", "notified", "informed")
TIMED = ("seconds", "per_second", "per_minute", "per_s", "elapsed")


def commands() -> dict[str, list[str]]:
    """Name -> `subsum` arguments. `{out}` is a fresh scratch folder of the command's own."""
    cmds: dict[str, list[str]] = {}
    for p in PROTOCOLS:
        cmds[f"simulate forwarding {p}"] = ["simulate", "forwarding", "--protocol", p, "--subscriptions", "60", "--events", "60",
                                            "--swaps", "5", "--gap", "3", "--defer-timeout", "20", "--sub-timeout", "30",
                                            "--seed", "3", "--trace", "{out}/trace.jsonl", "--format", "json"]
        for seed in (1, 2, 3):
            cmds[f"fuzz {p} seed {seed}"] = ["fuzz", "reconfig", "--protocol", p, "--seed", str(seed), "--schedules", "25",
                                             "--churn", "0.25", "--budget", "600", "--shrink-budget", "0",
                                             "--defer-timeout", "20", "--sub-timeout", "30", "--out-dir", "{out}",
                                             "--format", "json", "--quiet"]
    for p in (*PROTOCOLS, "siena", "siena-nocover", "summaries"):
        cmds[f"explore {p}"] = ["explore", "--protocol", p, "--brokers", "3", "--subscriptions", "2", "--events", "1",
                                "--swaps", "0" if p == "summaries" else "1", "--max-states", "1500", "--budget", "600",
                                "--out-dir", "{out}", "--format", "json", "--quiet"]
    for name, extra in {"siena": ["--swaps", "3"], "summaries": [], "broadcast": ["--swaps", "3"], "flooding": ["--swaps", "3"]}.items():
        cmds[f"simulate {name}"] = ["simulate", name, "--subscriptions", "50", "--events", "40", *extra, "--seed", "5",
                                    "--trace", "{out}/trace.jsonl", "--format", "json"]
    cmds["simulate caching"] = ["simulate", "caching", "--events", "300", "--seed", "5", "--format", "json"]
    cmds["simulate client-server"] = ["simulate", "client-server", "--steps", "300", "--seed", "5", "--format", "json"]
    for planted in ("ForgetfulStrawman", "HastyInformed"):
        cmds[f"fuzz planted {planted}"] = ["fuzz", "reconfig", "--protocol", f"subsum.bench.planted:{planted}", "--seed", "0",
                                           "--schedules", "40", "--churn", "0.25", "--shrink-budget", "0", "--budget", "600",
                                           "--max-violations", "3", "--out-dir", "{out}", "--format", "json", "--quiet"]
    cmds["explore planted ForgetfulStrawman"] = ["explore", "--protocol", "subsum.bench.planted:ForgetfulStrawman",
                                                 "--brokers", "3", "--subscriptions", "2", "--budget", "600",
                                                 "--out-dir", "{out}", "--format", "json", "--quiet"]
    return cmds


def untimed(value):
    """`value` without the figures that measure time."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if not any(t in k for t in TIMED)}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def run(python: str, args: list[str], scratch: Path) -> dict:
    """One command's exit code, its JSON report without timings, and every file it wrote (sha256 and, for a
    replay, the replay itself); then `subsum replay` of each replay it wrote."""
    argv = [a.replace("{out}", str(scratch)) for a in args]
    done = subprocess.run([python, "-m", "subsum", *argv], capture_output=True, text=True, cwd=scratch.parent,
                          env={"PATH": "/usr/bin:/bin", "SUBSUM_PROGRESS_SECONDS": "1000000"})
    try:
        report = untimed(json.loads(done.stdout.replace(str(scratch), "{out}")))
    except ValueError:
        report = {"stdout": done.stdout.replace(str(scratch), "{out}"), "stderr": done.stderr[-3000:].replace(str(scratch), "{out}")}
    files = {}
    for path in sorted(p for p in scratch.rglob("*") if p.is_file()):
        text = path.read_bytes()
        files[str(path.relative_to(scratch))] = hashlib.sha256(text).hexdigest()
    replays = {}
    for path in sorted(scratch.glob("*.json")):
        protocol = json.loads(path.read_text()).get("protocol", "")
        plugin = ["--protocol", protocol] if ":" in protocol else []  # a plug-in's replay names it to be imported
        again = subprocess.run([python, "-m", "subsum", "replay", *plugin, str(path)], capture_output=True, text=True,
                               cwd=scratch.parent)
        replays[path.name] = {"exit": again.returncode, "stdout": again.stdout.replace(str(scratch), "{out}")}
    return {"exit": done.returncode, "report": report, "files": files, "replays": replays}


def outputs(python: str, only: str | None) -> dict:
    result = {}
    with tempfile.TemporaryDirectory(prefix="observable-") as root:
        for k, (name, args) in enumerate(commands().items()):
            if only and only not in name:
                continue
            scratch = Path(root) / f"c{k}"
            scratch.mkdir()
            print(f"{name} ...", file=sys.stderr, flush=True)
            result[name] = run(python, args, scratch)
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("record", "compare"))
    parser.add_argument("file", type=Path)
    parser.add_argument("--python", default=sys.executable, help="the Python whose subsum runs the commands")
    parser.add_argument("--only", help="run only the commands whose name contains this")
    options = parser.parse_args(argv)
    recorded: dict = {}
    try:  # the file checked before the commands run (a minute of them)
        if options.action == "record":
            check_output_path(options.file)
        else:
            recorded = json.loads(options.file.read_text(encoding="utf-8"))
            if not isinstance(recorded, dict):
                raise ValueError("not a JSON object of recorded commands")
    except (OSError, ValueError, InputError) as error:
        parser.error(f"{options.file}: {error}")
    now = outputs(options.python, options.only)
    if options.action == "record":
        options.file.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(now)} commands in {options.file}")
        return 0
    added = {name: added_fields(now[name], recorded.get(name)) for name in now}
    differ = [name for name in now if added[name] is None]
    for name in differ:
        print(f"differs: {name}\n  recorded: {json.dumps(recorded.get(name))[:1500]}\n  now:      {json.dumps(now[name])[:1500]}")
    gained = sorted({field for fields in added.values() if fields for field in fields})
    more = f" (report fields added since, not compared: {', '.join(gained)})" if gained else ""
    print(f"{len(now) - len(differ)} of {len(now)} commands give what was recorded{more}")
    return 1 if differ else 0


def added_fields(now: dict, recorded: dict | None) -> list[str] | None:
    """The fields `now`'s JSON report has that `recorded`'s has not, at any depth (a nested one named by its path),
    if everything else is the same; None if not.

    >>> added_fields({"exit": 0, "report": {"a": 1, "b": 2}}, {"exit": 0, "report": {"a": 1}})
    ['b']
    >>> added_fields({"exit": 0, "report": {"a": {"x": 1, "y": 0}}}, {"exit": 0, "report": {"a": {"x": 1}}})
    ['a.y']
    >>> added_fields({"exit": 0, "report": {"v": [{"x": 1, "at": 3}]}}, {"exit": 0, "report": {"v": [{"x": 1}]}})
    ['v[].at']
    >>> added_fields({"exit": 0, "report": {"a": 2, "b": 2}}, {"exit": 0, "report": {"a": 1}}) is None
    True
    """
    if recorded is None:
        return None
    report, was = now.get("report"), recorded.get("report")
    if not isinstance(report, dict) or not isinstance(was, dict):
        return [] if now == recorded else None
    extra: list[str] = []
    kept = {**now, "report": _without_added(report, was, "", extra)}
    return sorted(extra) if kept == recorded else None


def _without_added(now: dict, was: dict, prefix: str, extra: list[str]) -> dict:
    """`now` without the keys `was` lacks (each named into `extra`), nested dicts and lists of them alike."""
    kept = {}
    for key, value in now.items():
        if key not in was:
            extra.append(prefix + key)
        elif isinstance(value, dict) and isinstance(was[key], dict):
            kept[key] = _without_added(value, was[key], f"{prefix}{key}.", extra)
        elif (isinstance(value, list) and isinstance(was[key], list) and len(value) == len(was[key])
              and all(isinstance(v, dict) and isinstance(w, dict) for v, w in zip(value, was[key]))):
            kept[key] = [_without_added(v, w, f"{prefix}{key}[].", extra) for v, w in zip(value, was[key])]
        else:
            kept[key] = value
    return kept


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
