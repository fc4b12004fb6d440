"""The mutation report of `make mutate`: killed, survived and timed out, per
module and per package, with the survivors judged equivalent set apart.

Reads mutmut 3's per-file results (`mutants/<path>.py.meta`, JSON whose
`exit_code_by_key` maps a mutant's name to the test run's exit status, as
mutmut/stats.py reads it) and `mutation/equivalent.txt` (one line a mutant:
`NAME<TAB>why it cannot change behaviour`). Writes report.csv (one row a
module), report.md (the package table against the 90% target, then every
survivor not yet triaged) and survivors.txt.

    python scripts/mutation_report.py build/mutation/stage/mutants --equivalent mutation/equivalent.txt --out-dir mutation

Several results folders may be given, oldest first: a later run's verdict on
a mutant (say, a rerun of the survivors after new checks) replaces an
earlier one; mutants a later run did not check keep their earlier verdict.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from pathlib import Path

#: mutmut 3.8's reading of a child's exit status (mutmut/stats.py, status_by_exit_code).
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped", 36: "timeout", 24: "timeout",
          -24: "timeout", 152: "timeout", 255: "timeout", 37: "type check", -11: "segfault", -9: "segfault", None: "not checked"}
TARGET = 0.90
#: The packages the issue sets the target for, and the model (reported, no target).
PACKAGES = ("subsum/impl/matching", "subsum/impl/summary", "subsum/impl/network", "subsum/impl/caching", "subsum/model")


def bad_input(message: str) -> None:
    """Bad input: one line on standard error, exit 2, nothing written (the project's convention)."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def read_equivalent(path: Path) -> dict[str, str]:
    equivalent: dict[str, str] = {}
    if not path.exists():
        return equivalent
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        bad_input(f"{path}: cannot read: {exc}")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        name, sep, why = line.partition("\t")
        if not sep or not why.strip():
            bad_input(f"{path}:{number}: expected NAME<TAB>reason")
        equivalent[name.strip()] = why.strip()
    return equivalent


def read_results(runs: list[Path]) -> dict[str, dict[str, str]]:
    """module path -> mutant name -> status, the latest run's verdict winning."""
    results: dict[str, dict[str, str]] = {}
    for mutants in runs:
        for meta in sorted(mutants.rglob("*.py.meta")):
            module = str(meta.relative_to(mutants))[: -len(".meta")]
            codes = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {})
            statuses = results.setdefault(module, {})
            for name, code in codes.items():
                status = STATUS.get(code, "suspicious")
                if status != "not checked" or name not in statuses:
                    statuses[name] = status
    return results


def package_of(module: str) -> str:
    return next((p for p in PACKAGES if module.startswith(p + "/")), "/".join(module.split("/")[:3]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mutants", type=Path, nargs="+", help="mutmut's mutants/ folders, oldest run first")
    parser.add_argument("--equivalent", type=Path, default=Path("mutation/equivalent.txt"))
    parser.add_argument("--out-dir", type=Path, default=Path("mutation"))
    parser.add_argument("--note", default="", help="what was run (the commit, the globs, the time): printed under the title")
    args = parser.parse_args()
    for folder in args.mutants:
        if not folder.is_dir():
            bad_input(f"{folder}: no mutmut results (run `make mutate` first)")
    equivalent = read_equivalent(args.equivalent)
    results = read_results(args.mutants)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    columns = ("killed", "survived", "equivalent", "timeout", "no tests", "not checked", "other")
    rows, by_package, survivors = [], {}, []
    for module, statuses in results.items():
        counts: Counter[str] = Counter()
        for name, status in statuses.items():
            if status == "survived" and name in equivalent:
                status = "equivalent"
            elif status == "survived":
                survivors.append(name)
            counts[status if status in columns else "other"] += 1
        rows.append((module, counts))
        by_package.setdefault(package_of(module), Counter()).update(counts)
    with open(args.out_dir / "report.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(("module", "total", *columns, "kill_rate"))
        for module, c in rows:
            writer.writerow((module, sum(c.values()), *(c[k] for k in columns), f"{kill_rate(c):.3f}" if kill_rate(c) is not None else ""))
    lines = ["# Mutation report (`make mutate`)", "", *([f"Run: {args.note}.", ""] if args.note else []),
             "Kill rate = killed / (killed + survived + timeout), equivalent mutants set apart (mutation/equivalent.txt); "
             "`not checked` mutants were not reached before the run's time limit.", "",
             "| package | total | killed | survived | equivalent | timeout | no tests | not checked | kill rate | target |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for package, c in sorted(by_package.items()):
        rate = kill_rate(c)
        target = "" if package == "subsum/model" else ("met" if rate is not None and rate >= TARGET else "**not met**")
        lines.append(f"| {package} | {sum(c.values())} | {c['killed']} | {c['survived']} | {c['equivalent']} | {c['timeout']} | "
                     f"{c['no tests']} | {c['not checked']} | {'' if rate is None else f'{rate:.1%}'} | {target} |")
    lines += ["", f"{len(survivors)} survivors not yet triaged: survivors.txt (`mutmut show NAME` in the stage shows each)."]
    known = {name for statuses in results.values() for name in statuses}
    stale = sorted(set(equivalent) - known)
    if stale:  # a renamed or removed function: its equivalence must be judged again
        lines += ["", f"{len(stale)} entries of {args.equivalent} name no mutant of this run: " + ", ".join(stale)]
    (args.out_dir / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (args.out_dir / "survivors.txt").write_text("".join(f"{s}\n" for s in sorted(survivors)), encoding="utf-8")
    print("\n".join(lines))


def kill_rate(c: Counter[str]) -> float | None:
    judged = c["killed"] + c["survived"] + c["timeout"]
    return c["killed"] / judged if judged else None


if __name__ == "__main__":
    main()
