"""`benchmarks/FIDELITY.md`: every quantitative statement of seeds 000
§5–6, 001 §4, 003 §2.6–6 and 004 beside what our benches measured, with a
verdict computed by one rule (`subsum.fidelity.verdict`, spec/13) and, for
every statement that does not match, what explains it (issues 33 and 54;
`subsum fidelity`, run last by `make bench`).

The statements are data (`subsum/fidelity/statements/seed*.toml`, read by
`load`): the seed's words and value, and a measure that reads
our results folder. Nothing here runs a benchmark; the table is as good as
the results it reads, and says when they came from --quick runs.

It reads only what it can read whole (issue 51): a file a statement reads
that is absent, empty or truncated, a column it reads that the header
lacks, a cell read as a number that is nan or infinite, or a summary.json
that is not JSON stops the run with an `InputError` naming file:line and
field (exit 2), before anything is written. With `allow_missing`, a
statement whose file is absent is marked *not measured (file absent)*
(counted apart from the verdicts), never *not reproduced*; a corrupt
file is refused all the same. The outputs are checked before any work.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import attrs

from subsum.fidelity import verdict as rule
from subsum.fidelity.explain import DIFFERENCE_BY, GRADES, NOT_MEASURED, graded, held_of, render
from subsum.fidelity.load import FOLDER, LEFT_OUT_REASONS, Reading, Statement, StatementError, left_out_all, load_all
from subsum.fidelity.measure import FileAbsent, Ours, Results, fmt
from subsum.core.errors import InputError
from subsum.core.outputs import check_output_folder, check_output_path, write_lines_atomically

#: the marking of a statement whose file is absent, under --allow-missing: not a verdict of the rule
FILE_ABSENT = "not measured (file absent)"
#: the marking of a row that matches because our implementation makes it so (its statement's `by_construction` says
#: why): counted apart from the rule's *matches* (spec/13 DEF-FID-6)
BY_CONSTRUCTION = "by construction"


@attrs.frozen
class Row:
    statement: Statement
    ours: Ours | None
    verdict: str
    readings: tuple[tuple[str, Ours | None, str], ...] = ()  # (label, ours, verdict)
    absent: str = ""  # the absent file, when the verdict is FILE_ABSENT
    direction: str = ""  # a number's: which way our series goes, beside the verdict (`verdict.direction_note`)
    values: tuple[tuple[str, Ours | None], ...] = ()  # what the explanation's placeholders read


def judge(statement: Statement, ours: Ours | None) -> str:
    """The verdict by the stated rule (`subsum.fidelity.verdict`)."""
    if ours is None:
        return rule.NOT_REPRODUCED
    if statement.kind == "number":
        assert statement.number is not None
        return rule.number_verdict(statement.number, statement.band, ours.mean)
    if statement.kind == "trend":
        assert statement.direction is not None
        return rule.trend_verdict(statement.direction, ours.series)
    assert statement.better is not None
    return rule.ranking_verdict(statement.order, statement.better, ours.points, ours.point_ci95 or None)


def direction(statement: Statement, ours: Ours | None, series: Ours | None) -> str:
    """Beside a number's verdict: which way our series goes along the parameter the seed says the number moves with
    (`series`, or our own), against the way the seed says (`verdict.direction_note`)."""
    if statement.kind != "number" or ours is None:
        return ""
    return rule.direction_note(statement.direction, series.series if series is not None else ours.series)


def measured(s: Statement, results: Results, allow_missing: bool) -> Row:
    """One statement measured and judged; a reading whose file is absent is
    marked FILE_ABSENT under `allow_missing` (FileAbsent otherwise)."""
    ours = s.measure(results) if s.measure is not None else None
    series = s.trend(results) if s.trend is not None else None
    readings: list[tuple[str, Ours | None, str]] = []
    for reading in s.readings:
        theirs, absent = measured_or_absent(reading, results, allow_missing)
        readings.append((reading.label, theirs, FILE_ABSENT if absent else judge(s, theirs)))
    values = tuple((value.label, measured_or_absent(value, results, allow_missing)[0]) for value in s.values)
    verdict = judge(s, ours)
    if s.by_construction and verdict == rule.MATCHES:
        verdict = BY_CONSTRUCTION
    return Row(s, ours, verdict, tuple(readings), direction=direction(s, ours, series), values=values)


def measured_or_absent(reading: Reading, results: Results, allow_missing: bool) -> tuple[Ours | None, bool]:
    """A reading's (or a value's) measure on the results, and whether its file is absent (only under `allow_missing`)."""
    try:
        return (reading.measure(results) if reading.measure is not None else None), False
    except FileAbsent:
        if not allow_missing:
            raise
        return None, True


def evaluate(statements: Sequence[Statement], results: Results, *, allow_missing: bool = False) -> list[Row]:
    """Every statement measured on `results` and judged. A file it cannot
    read whole is an InputError naming the file and the statement; an
    absent one is too, unless `allow_missing` marks the statement FILE_ABSENT."""
    rows = []
    for s in statements:
        try:
            rows.append(measured(s, results, allow_missing))
        except FileAbsent as absent:
            if not allow_missing:
                raise FileAbsent(absent.path, absent.line, absent.field, f"{absent.message}; statement {s.id} reads it "
                                 f"(--allow-missing marks such statements '{FILE_ABSENT}')") from None
            rows.append(Row(s, None, FILE_ABSENT, absent=absent.path))
        except InputError as error:
            raise InputError(error.path, error.line, error.field, f"{error.message} (statement {s.id})") from None
        except (ValueError, KeyError) as error:
            raise StatementError(f"statement {s.id}: its measure cannot read the results: {error}") from None
    return rows


def judged(bench: str, folder, seed: str, figures: Sequence[str], statements_dir=None) -> list[dict]:
    """The verdicts of one seed's statements about `figures`, measured on one
    bench's output folder (its files read as `bench/...`): what the bench's
    summary.json gives as its verdicts, by the same statements and rule as
    benchmarks/FIDELITY.md."""
    statements = [s for s in load_all(Path(statements_dir) if statements_dir else FOLDER) if s.seed == seed and s.figure in figures]
    results = Results(Path(folder).parent, {bench: Path(folder)})
    return [{"id": r.statement.id, "figure": r.statement.figure, "statement": r.statement.value,
             "ours": None if r.ours is None else ours_text(r.statement, r.ours), "verdict": r.verdict}
            for r in evaluate(statements, results)]


def unexplained(rows: Sequence[Row]) -> list[str]:
    """The ids of rows that do not match and have no explanation (there must be none)."""
    return [r.statement.id for r in rows if r.verdict in (rule.SAME_TREND, rule.DIFFERS, rule.NOT_REPRODUCED)
            and not r.statement.explain.strip()]


def markings(allow_missing: bool) -> tuple[str, ...]:
    """What the counts count: the rule's verdicts, and FILE_ABSENT apart from them under --allow-missing."""
    verdicts = (rule.MATCHES, BY_CONSTRUCTION, *rule.VERDICTS[1:])
    return (*verdicts, FILE_ABSENT) if allow_missing else verdicts


def counts(rows: Sequence[Row], allow_missing: bool = False) -> dict[str, dict[str, int]]:
    """Verdict counts per seed and in all (and FILE_ABSENT's, under `allow_missing`)."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        for key in (r.statement.seed, "all"):
            out.setdefault(key, {v: 0 for v in markings(allow_missing)})[r.verdict] += 1
    return out


def seed_value(s: Statement) -> str:
    extra = ""
    if s.kind == "number" and s.band is not None:
        extra = f" (stated range {fmt(s.band[0])}–{fmt(s.band[1])})"
    elif s.kind == "number":
        extra = f" (±15%: {fmt(rule.band_of(s.number or 0.0)[0])}–{fmt(rule.band_of(s.number or 0.0)[1])})"
    elif s.kind == "trend":
        extra = f" ({s.direction})"
    else:
        extra = f" (best first: {', '.join(s.order)}; {s.better} is better)"
    return s.value + extra


def ours_text(s: Statement, ours: Ours | None) -> str:
    """Our side as the table shows it; a ranking says at how many points the order holds."""
    if ours is None:
        return "not measured"
    if s.kind == "ranking" and ours.points and s.better is not None:
        held = sum(rule.holds(s.order, s.better, p) for p in ours.points)
        return f"order holds at {held} of {len(ours.points)} points: " + ours.text()
    return ours.text()


def cell_text(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def left_out_counts(left: Sequence[tuple[str, str]]) -> dict[str, dict[str, int]]:
    """How many statements each seed leaves out, by reason (spec/13 DEF-FID-8), and in all."""
    out: dict[str, dict[str, int]] = {}
    for statement_id, reason in left:
        for key in (statement_id.split("-", 1)[0] if statement_id[:1].isdigit() else "other", "all"):
            out.setdefault(key, {r: 0 for r in LEFT_OUT_REASONS})[reason] += 1
    return out


def left_out_section(left: Sequence[tuple[str, str]]) -> list[str]:
    tally = left_out_counts(left)
    if not tally:
        return []
    seeds = sorted(k for k in tally if k != "all") + ["all"]
    lines = ["", "## Left out, by reason", "",
             "Statements that are not rows, each listed with its reason at the end of its seed's file (spec/13 DEF-FID-8):", "",
             "| reason | " + " | ".join(seeds) + " |", "|---" * (len(seeds) + 1) + "|"]
    lines += [f"| {reason} | " + " | ".join(str(tally[k][reason]) for k in seeds) + " |"
              for reason in LEFT_OUT_REASONS if tally["all"][reason]]
    return lines


def markdown(rows: Sequence[Row], source: str, quick: bool | None, allow_missing: bool = False,
             left: Sequence[tuple[str, str]] = ()) -> str:
    """FIDELITY.md: the rule, the counts, and a row per statement."""
    tally = counts(rows, allow_missing)
    marks = markings(allow_missing)
    lines = ["# Fidelity: the seeds' statements against our results", "",
             f"Generated by `subsum fidelity` from `{source}`; do not edit by hand (`make bench` regenerates it).", ""]
    if quick:
        lines += ["**QUICK RESULTS.** These come from `--quick` runs (few points, one seed, short runs): the verdicts below "
                  "are a smoke test of the pipeline, not the fidelity of subsum.", ""]
    absent = absent_files(rows)
    if absent:
        lines += [f"**FILES ABSENT.** {sum(r.verdict == FILE_ABSENT for r in rows)} statements read files that are absent "
                  f"(`--allow-missing`): {', '.join(f'`{a}`' for a in absent)}. They are marked *{FILE_ABSENT}*, not judged.", ""]
    lines += ["## The rule", "", (rule.__doc__ or "").split("\n\n", 1)[1].split(">>>")[0].strip(), "",
              "## Counts", "", "| seed | " + " | ".join(marks) + " | statements |", "|---" * (len(marks) + 2) + "|"]
    for seed in sorted(tally):
        c = tally[seed]
        lines.append(f"| {seed} | " + " | ".join(str(c[v]) for v in marks) + f" | {sum(c.values())} |")
    lines += left_out_section(left)
    lines += grades_section(rows)
    lines += readings_section(rows)
    for seed in sorted(k for k in tally if k != "all"):
        lines += ["", f"## Seed {seed}", "", "| id | section | the seed says | seed's value | ours | verdict | other readings | why it does not match |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in rows:
            s = r.statement
            if s.seed != seed:
                continue
            why = explanation(r)
            where = f"{s.section}" + (f", {s.figure}" if s.figure else "") + (f"; also {', '.join(s.also)}" if s.also else "")
            said = s.quote + (f" ({s.gloss})" if s.gloss else "")
            others = "; ".join(f"{label}: {ours_text(s, o)}, **{v}**" for label, o, v in r.readings)
            lines.append(f"| {s.id} | {where} | {cell_text(said)} | {cell_text(seed_value(s))} | "
                         f"{cell_text(ours_text(s, r.ours))} | **{r.verdict}**{f' ({r.direction})' if r.direction else ''} | "
                         f"{cell_text(others)} | {cell_text(why)} |")
    return "\n".join(lines) + "\n"


#: the verdicts whose explanation the table shows: every one but matches and by construction
SHOWN = (rule.SAME_TREND, rule.DIFFERS, rule.NOT_REPRODUCED)


def explained(rows: Sequence[Row]) -> list[Row]:
    """The rows whose explanation the table shows."""
    return [r for r in rows if r.verdict in SHOWN]


def grades_section(rows: Sequence[Row]) -> list[str]:
    """How many explanations rest on a measured reading, a derivation, a cause in the seed, or nothing yet."""
    shown = explained(rows)
    lines = ["", "## Explanations, by grade", "", "| grade | meaning | rows |", "|---|---|---|"]
    lines += [f"| {g} | {meaning} | {sum(r.statement.grade == g for r in shown)} |" for g, meaning in GRADES.items()]
    ungraded = [r.statement.id for r in shown if not r.statement.grade]
    lines += [f"| – | not graded | {len(ungraded)}: {', '.join(ungraded)} |"] if ungraded else []
    lines += ["", "Whose each difference is (spec/13 DEF-FID-10):", "", "| by | meaning | rows |", "|---|---|---|"]
    lines += [f"| {by} | {meaning} | {sum(r.statement.difference_by == by for r in shown)} |" for by, meaning in DIFFERENCE_BY.items()]
    unassigned = [r.statement.id for r in shown if not r.statement.difference_by]
    return lines + ([f"| – | not said | {len(unassigned)}: {', '.join(unassigned)} |"] if unassigned else [])


RANK = {rule.MATCHES: 0, BY_CONSTRUCTION: 0, rule.SAME_TREND: 1, rule.DIFFERS: 2, rule.NOT_REPRODUCED: 3}


def reading_changes(rows: Sequence[Row]) -> list[tuple[Row, str, str]]:
    """(row, reading, its verdict) for every other reading that reproduces a
    statement better or worse than the default reading does."""
    return [(r, label, v) for r in rows if r.verdict != FILE_ABSENT
            for label, _, v in r.readings if v != r.verdict and v not in (rule.NOT_REPRODUCED, FILE_ABSENT)]


def readings_section(rows: Sequence[Row]) -> list[str]:
    """Which readings of the seeds' open choices reproduce them better (or worse) than our defaults."""
    changes = reading_changes(rows)
    lines = ["", "## Readings that change a verdict", "",
             "Where a seed leaves a choice open (a protocol's rule, an accounting, which measure its words mean), the default is "
             "chosen by the seed's text (spec/ says why) and the other readings are measured beside it. These give another "
             "verdict than the default:", ""]
    if not changes:
        return lines + ["None."]
    lines += ["| id | reading | default's verdict | the reading's verdict |", "|---|---|---|---|"]
    lines += [f"| {r.statement.id} | {cell_text(label)} | {r.verdict} | {'better: ' if RANK[v] < RANK[r.verdict] else 'worse: '}{v} |"
              for r, label, v in changes]
    return lines


def absent_files(rows: Sequence[Row]) -> list[str]:
    """The absent files that marked statements FILE_ABSENT, each once."""
    return sorted({r.absent for r in rows if r.verdict == FILE_ABSENT})


def as_json(rows: Sequence[Row], quick: bool | None, allow_missing: bool = False) -> dict:
    extra = {"absent_files": absent_files(rows)} if allow_missing else {}
    return {"quick": quick, "counts": counts(rows, allow_missing), **extra,
            "statements": [{"id": r.statement.id, "section": r.statement.section, "also": list(r.statement.also),
                            "kind": r.statement.kind, "quote": r.statement.quote,
                            "seed_value": r.statement.value, "ours": None if r.ours is None else ours_text(r.statement, r.ours),
                            "verdict": r.verdict, "direction": r.direction, "explanation": explanation(r),
                            "grade": r.statement.grade if r.verdict in SHOWN else "",
                            "difference_by": r.statement.difference_by if r.verdict in SHOWN else "",
                            "readings": [{"label": label, "ours": None if o is None else ours_text(r.statement, o), "verdict": v}
                                         for label, o, v in r.readings]}
                           for r in rows],
            "unexplained": unexplained(rows)}


def explanation(r: Row) -> str:
    """What a differing or unreproduced row says about why, or which file is absent ("" for the others)."""
    if r.verdict == FILE_ABSENT:
        return f"{r.absent} is absent (--allow-missing)"
    if r.verdict == rule.MATCHES:
        return ""
    if r.verdict == BY_CONSTRUCTION:
        return f"By construction: {r.statement.by_construction}"
    s = r.statement
    if not s.explain:
        return "NO EXPLANATION RECORDED: this row matched in the committed results"
    measured = (*r.values, ("ours", r.ours), *((f"reading{k}", ours) for k, (_, ours, _) in enumerate(r.readings, 1)))
    texts = {name: value_text(ours) for name, ours in measured}
    texts.update({f"{name}:held": held_of(s.order, s.better, ours.points if ours else ()) for name, ours in measured})
    return graded(s.grade, s.evidence, render(s.explain, texts))


def value_text(ours: Ours | None) -> str:
    """A measured value as an explanation quotes it: the numbers, without the rows they come from."""
    return NOT_MEASURED if ours is None else attrs.evolve(ours, where="").text()


def check_output(path: Path) -> None:
    """Raise InputError unless `path` can be written: its folder exists or can
    be made (it is made, as it always has been), which is tried and left as
    found (`check_output_folder`), and the file itself can be made there."""
    check_output_folder(path.parent)
    if path.parent.is_dir():
        check_output_path(path)


def make_folder(path: Path) -> None:
    """Make the folder `path` goes in, as an InputError naming `path` if it cannot be made."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(str(path), None, None, f"cannot make its folder {path.parent}: {error.strerror or error}") from None


def overwrites_input(path: Path, results: Path, statements: Path) -> str | None:
    """Which input option `path` would overwrite: a bench's file under --results (BENCH/FILE), or a seed*.toml of
    --statements. The top of --results holds no input (`make bench` writes its FIDELITY.md there)."""
    where, results, statements = path.resolve(), results.resolve(), statements.resolve()
    if where.is_relative_to(results) and where.parent != results:
        return f"under --results {results}"
    if where.parent == statements and where.match("seed*.toml"):
        return f"a statement file of --statements {statements}"
    return None


def check_outputs(output, json_output, results_dir, statements_dir) -> tuple[Path, Path]:
    """(FIDELITY.md, fidelity.json), each checked before anything is read (InputError): writable, apart, and not an input."""
    out = Path(output)
    target = Path(json_output) if json_output else out.with_name("fidelity.json")
    if out.resolve() == target.resolve():
        raise InputError(str(out), None, None, "is where fidelity.json goes: name the table otherwise")
    for path in (out, target):
        check_output(path)
        read_by = overwrites_input(path, Path(results_dir), Path(statements_dir or FOLDER))
        if read_by:
            raise InputError(str(path), None, None, f"is a file fidelity reads ({read_by}): write the table elsewhere")
    return out, target


def run(results_dir, output, *, json_output=None, statements_dir=None, allow_missing: bool = False) -> dict:
    """Write FIDELITY.md (and fidelity.json beside it, unless `json_output`
    says where) from the results folder; returns the JSON document, whose
    `unexplained` lists the differing or unreproduced rows that name no
    explanation (none in the committed table: a test checks it).

    Both outputs are checked before anything is read (InputError), and
    nothing is written unless every file the statements read is whole
    (`evaluate`; `allow_missing` lets absent files mark their statements)."""
    out, target = check_outputs(output, json_output, results_dir, statements_dir)
    results = Results(Path(results_dir))
    folder = Path(statements_dir) if statements_dir else FOLDER
    rows = evaluate(load_all(folder), results, allow_missing=allow_missing)
    left = left_out_all(folder)
    quick = results.quick()
    document = {**as_json(rows, quick, allow_missing), "left_out": left_out_counts(left)}
    text = markdown(rows, str(results_dir), quick, allow_missing, left)
    for path in (out, target):
        make_folder(path)
    write_lines_atomically(out, text.rstrip("\n").split("\n"))
    write_lines_atomically(target, [json.dumps(document, indent=2, ensure_ascii=False)])
    return document
