"""The mutation report of `make mutate`: killed, survived and timed out, per
module and per package, with the survivors judged equivalent set apart.

Reads mutmut 3's per-file results (`mutants/<path>.py.meta`, JSON whose
`exit_code_by_key` maps a mutant's name to the test run's exit status, as
mutmut/stats.py reads it) and `mutation/equivalent.txt` (one line a mutant:
`NAME<TAB>why it cannot change behaviour`). Writes report.csv (one row a
module), report.md (the package table against the 95% target, then every
survivor (survived, or run by no selected test) not yet triaged) and survivors.txt.

    python scripts/mutation_report.py build/mutation/stage/mutants --equivalent mutation/equivalent.txt --out-dir mutation

Several results folders may be given, oldest first: a later run's verdict on
a mutant (say, a rerun of the survivors after new checks) replaces an
earlier one; mutants a later run did not check keep their earlier verdict.

`--previous mutation/report.csv` (what `make mutate` passes) carries the rows
and survivors of the modules this run did not mutate from the committed
report, so a run of one package does not erase the others' results.

`--sample mutation/sample.txt` (what `make mutate SAMPLE=N` passes) reports
on a seeded uniform sample of each package's mutants instead
(scripts/mutation_sample.py) and writes sample.{csv,md}: the sample's kill
rate estimates the package's, with a 95% Wilson interval, and the verdict
follows a stated rule (`sample_verdict`).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

#: mutmut 3.8's reading of a child's exit status (mutmut/stats.py, status_by_exit_code).
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped", 36: "timeout", 24: "timeout",
          -24: "timeout", 152: "timeout", 255: "timeout", 37: "type check", -11: "segfault", -9: "segfault", None: "not checked"}
TARGET = 0.95
#: The packages the target is set for (issue 34: at least 95% of the non-equivalent mutants killed in each).
PACKAGES = ("subsum/impl/matching", "subsum/impl/summary", "subsum/impl/network", "subsum/impl/caching", "subsum/model",
            "subsum/conformance")
#: The verdicts that leave a mutant alive, to be triaged: a new test, or a reason in mutation/equivalent.txt.
NOT_KILLED = ("survived", "no tests")
COLUMNS = ("killed", "survived", "equivalent", "timeout", "no tests", "not checked", "other")


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


def read_previous(report: Path, survivors: Path, modules: set[str]) -> tuple[list[tuple[str, Counter[str]]], list[str]]:
    """The committed report's rows and survivors of the modules not in `modules` (this run's)."""
    if not report.exists():
        return [], []
    rows = []
    try:
        with open(report, newline="", encoding="utf-8") as handle:
            for line, row in enumerate(csv.DictReader(handle), start=2):  # line 1 is the header
                for field in ("module", *COLUMNS):
                    value = row.get(field)
                    if value is None or (field != "module" and not value.isdigit()):
                        bad_input(f"{report}:{line}: field {field!r}: expected {'a module path' if field == 'module' else 'a count'}, "
                                  f"got {value!r}")
                if row["module"] not in modules:
                    rows.append((row["module"], Counter({k: int(row[k]) for k in COLUMNS})))
        kept = survivors.read_text(encoding="utf-8").split() if survivors.exists() else []
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        bad_input(f"{report}: cannot read the earlier report: {exc}")
    carried = {module for module, _ in rows}
    return rows, [name for name in kept if module_of_mutant(name) in carried]


def module_of_mutant(name: str) -> str:
    """subsum.impl.summary.wire.x_from_json__mutmut_3 -> subsum/impl/summary/wire.py"""
    return re.split(r"\.x[ǁ_]", name, maxsplit=1)[0].replace(".", "/") + ".py"


def package_of(module: str) -> str:
    return next((p for p in PACKAGES if module.startswith(p + "/")), "/".join(module.split("/")[:3]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mutants", type=Path, nargs="+", help="mutmut's mutants/ folders, oldest run first")
    parser.add_argument("--equivalent", type=Path, default=Path("mutation/equivalent.txt"))
    parser.add_argument("--out-dir", type=Path, default=Path("mutation"))
    parser.add_argument("--note", default="", help="what was run (the commit, the globs, the time): printed under the title")
    parser.add_argument("--previous", type=Path, help="an earlier report.csv: its rows (and survivors.txt beside it) for the modules this run lacks")
    parser.add_argument("--sample", type=Path, help="the sample's mutant names (scripts/mutation_sample.py): write sample.{csv,md} instead")
    args = parser.parse_args()
    for folder in args.mutants:
        if not folder.is_dir():
            bad_input(f"{folder}: no mutmut results (run `make mutate` first)")
    equivalent = read_equivalent(args.equivalent)
    results = read_results(args.mutants)
    if args.sample is not None:
        write_sample_report(args.sample, results, equivalent, args.out_dir, args.note)
        return
    columns = COLUMNS
    rows, by_package, survivors = [], {}, []
    carried_rows, carried_survivors = ([], []) if args.previous is None else \
        read_previous(args.previous, args.previous.with_name("survivors.txt"), set(results))
    args.out_dir.mkdir(parents=True, exist_ok=True)  # only once every input has been read
    for module, counts in carried_rows:
        rows.append((module, counts))
        by_package.setdefault(package_of(module), Counter()).update(counts)
    survivors += carried_survivors
    for module, statuses in results.items():
        counts: Counter[str] = Counter()
        for name, status in statuses.items():
            if status in NOT_KILLED and name in equivalent:
                status = "equivalent"
            elif status in NOT_KILLED:
                survivors.append(name)
            counts[status if status in columns else "other"] += 1
        rows.append((module, counts))
        by_package.setdefault(package_of(module), Counter()).update(counts)
    rows.sort(key=lambda row: row[0])
    with open(args.out_dir / "report.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(("module", "total", *columns, "kill_rate"))
        for module, c in rows:
            writer.writerow((module, sum(c.values()), *(c[k] for k in columns), f"{kill_rate(c):.3f}" if kill_rate(c) is not None else ""))
    carried = sorted({package_of(module) for module, _ in carried_rows})
    lines = ["# Mutation report (`make mutate`)", "", *([f"Run: {args.note}.", ""] if args.note else []),
             *([f"Carried from the earlier report ({args.previous}): the modules of {', '.join(carried)} this run did not mutate.", ""]
               if carried else []),
             "Kill rate = killed / (killed + survived + timeout + no tests), equivalent mutants set apart (mutation/equivalent.txt): "
             "a mutant no selected test runs is not killed; "
             "`not checked` mutants were not reached before the run's time limit.", "",
             "| package | total | killed | survived | equivalent | timeout | no tests | not checked | kill rate | target |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for package, c in sorted(by_package.items()):
        rate = kill_rate(c)
        # met only when every mutant was run: a rate over the first mutants reached says nothing of the rest
        target = "**not met**" if rate is None or rate < TARGET else ("met" if not c["not checked"] else "**not all run**")
        lines.append(f"| {package} | {sum(c.values())} | {c['killed']} | {c['survived']} | {c['equivalent']} | {c['timeout']} | "
                     f"{c['no tests']} | {c['not checked']} | {'' if rate is None else f'{rate:.1%}'} | {target} |")
    for package in sorted(set(PACKAGES) - set(by_package)):
        lines.append(f"| {package} | not run | | | | | | | | **not met** |")
    lines += ["", f"{len(survivors)} survivors not yet triaged: survivors.txt (`mutmut show NAME` in the stage shows each)."]
    known = {name for statuses in results.values() for name in statuses}
    known |= {name for name in equivalent if module_of_mutant(name) in {module for module, _ in carried_rows}}
    stale = sorted(set(equivalent) - known)
    if stale:  # a renamed or removed function: its equivalence must be judged again
        lines += ["", f"{len(stale)} entries of {args.equivalent} name no mutant of this run: " + ", ".join(stale)]
    (args.out_dir / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (args.out_dir / "survivors.txt").write_text("".join(f"{s}\n" for s in sorted(survivors)), encoding="utf-8")
    print("\n".join(lines))


def wilson_interval(killed: int, judged: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (sound at 0 and at `judged`, unlike the normal one).

    >>> [round(x, 3) for x in wilson_interval(150, 150)]
    [0.975, 1.0]
    """
    p, n = killed / judged, judged
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - half) / (1 + z * z / n)), min(1.0, (centre + half) / (1 + z * z / n))


def sample_verdict(c: Counter[str]) -> str:
    """The rule: every sampled mutant run, and the interval's lower end at or above the target ("met"),
    its upper end below it ("not met"), or the target inside it ("undecided": a larger sample decides).
    """
    judged = judged_count(c)
    if c["not checked"] or not judged:
        return "**sample not all run**"
    low, high = wilson_interval(c["killed"], judged)
    return "met" if low >= TARGET else ("**not met**" if high < TARGET else "**undecided**")


def write_sample_report(sample: Path, results: dict[str, dict[str, str]], equivalent: dict[str, str], out_dir: Path, note: str) -> None:
    """sample.csv and sample.md: each package's sampled mutants, the estimated kill rate and its interval."""
    try:
        names = sample.read_text(encoding="utf-8").split()
    except (OSError, UnicodeDecodeError) as exc:
        bad_input(f"{sample}: cannot read the sample: {exc}")
    status = {name: st for statuses in results.values() for name, st in statuses.items()}
    # a package's __init__.py names its mutants after the package (subsum.impl.matching.x_f__mutmut_1): the results know the file
    module_of = {name: module for module, statuses in results.items() for name in statuses}
    totals = Counter(package_of(module) for module, statuses in results.items() for _ in statuses)
    by_package: dict[str, Counter[str]] = {}
    survivors = []
    for name in names:
        st = status.get(name, "not checked")
        if st in NOT_KILLED and name in equivalent:
            st = "equivalent"
        elif st in NOT_KILLED:
            survivors.append(name)
        by_package.setdefault(package_of(module_of.get(name) or module_of_mutant(name)), Counter())[st if st in COLUMNS else "other"] += 1
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = ["# Mutation report on a sample (`make mutate SAMPLE=N`)", "", *([f"Run: {note}.", ""] if note else []),
             f"A seeded uniform sample of each package's mutants ({sample}, scripts/mutation_sample.py). Kill rate = killed / "
             "(killed + survived + timeout + no tests) over the sample (a mutant no selected test runs is not killed), "
             "equivalent mutants set apart; the interval is the 95% Wilson interval. "
             f"Verdict: met when the interval's lower end is at least {TARGET:.0%}, not met when its upper end is below, "
             "undecided otherwise.", "",
             "| package | mutants | sampled | killed | survived | equivalent | timeout | no tests | not checked | kill rate | 95% interval | target |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    with open(out_dir / "sample.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(("package", "mutants", "sampled", *COLUMNS, "kill_rate", "low", "high", "verdict"))
        for package, c in sorted(by_package.items()):
            rate, judged = kill_rate(c), judged_count(c)
            low, high = wilson_interval(c["killed"], judged) if judged else (math.nan, math.nan)
            verdict = sample_verdict(c)
            writer.writerow((package, totals[package], sum(c.values()), *(c[k] for k in COLUMNS),
                             *(("", "", "") if rate is None else (f"{rate:.3f}", f"{low:.3f}", f"{high:.3f}")), verdict.strip("*")))
            lines.append(f"| {package} | {totals[package]} | {sum(c.values())} | {c['killed']} | {c['survived']} | {c['equivalent']} | "
                         f"{c['timeout']} | {c['no tests']} | {c['not checked']} | {'' if rate is None else f'{rate:.1%}'} | "
                         f"{'' if rate is None else f'{low:.1%} to {high:.1%}'} | {verdict} |")
    lines += ["", f"{len(survivors)} survivors (survived or untested) in the sample not yet triaged:", "", *(f"- `{name}`" for name in sorted(survivors))]
    (out_dir / "sample.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


def judged_count(c: Counter[str]) -> int:
    """The kill rate's denominator: every mutant run or found untested, equivalent ones set apart."""
    return c["killed"] + c["survived"] + c["timeout"] + c["no tests"]


def kill_rate(c: Counter[str]) -> float | None:
    judged = judged_count(c)
    return c["killed"] / judged if judged else None


if __name__ == "__main__":
    main()
