"""The fidelity statements as data: `subsum/fidelity/statements/seed*.toml`, one
`[[statement]]` table per quantitative statement of a seed (issue 33).

A statement's `[statement.measure]` says what of our results measures it,
in one of these kinds (`where` is an inline table of CSV column = value):

- `cell`: file, column, where, `reduce` = mean (default), max or min;
- `along`: file, column, x, where: a series of column against x;
- `ranked`: file, column, by, x, where: the means of the statement's
  `order` (values of column `by`) at each x (a column, or a list of
  columns: each combination is a point; two rows at one point are an
  error);
- `one_against_others`: file, column, by, x, where, `one` and `others`
  (values of `by`): `one` against its strongest rival among `others` at
  each point, for "X is the best (or the worst) of them";
- `columns`: file, x, where, `names` = {label = column}: several columns
  of one row ranked, labels as in `order`;
- `combine`: `op` (a-b, a/b, 1-a/b), `a` and `b` two cell measures;
- `named`: `name` of a function in `subsum.fidelity.named` or
  `named_cs`;
- `none`: nothing of ours measures it (`explain` says why).

A number statement may add `[statement.trend]`, an `along` measure: the
series along the parameter the seed says it moves with (`direction`),
for the note beside its verdict (spec/13 DEF-FID-3). `[[statement.reading]]` tables (label,
measure) are other readings of an open choice, judged by the same rule
and shown beside the default.
"""

from __future__ import annotations

import math
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Mapping

import attrs

from subsum.fidelity import measure as fm
from subsum.fidelity.explain import DIFFERENCE_BY, GRADES, placeholders
from subsum.fidelity import named as fidelity_named
from subsum.fidelity import named_cs as fidelity_named_cs
from subsum.fidelity import verdict as rule
from subsum.fidelity.measure import Measure

OPS = {"a-b": lambda a, b: a - b, "a+b": lambda a, b: a + b, "a/b": lambda a, b: a / b if b else float("inf"),
       "1-a/b": lambda a, b: 1 - a / b if b else float("nan")}
#: where `kind = "named"` measures live
NAMED = (fidelity_named, fidelity_named_cs)
#: The statement files, shipped in the package (a wheel has no benchmarks/ folder).
FOLDER = Path(str(resources.files("subsum.fidelity") / "statements"))


KINDS = ("number", "trend", "ranking")


@attrs.frozen
class Reading:
    """Another reading of a choice the seed leaves open, measured beside the default."""

    label: str
    measure: Measure | None


@attrs.frozen
class Statement:
    """One quantitative statement of a seed and how we measure it.

    `number` (with the seed's `band` when it states a precision) for a
    number; `direction` (up, down, flat) for a trend, or for a number the
    seed says moves with a parameter; `order` (best first) and `better`
    (lower or higher) for a ranking. `explain` names the experiment that
    explains a difference: required when the verdict is not matches.
    `also`: the other places the seed says the same (one row for a
    statement said several times, with the same measure)."""

    id: str
    section: str
    quote: str
    kind: str
    value: str
    measure: Measure | None
    number: float | None = None
    band: tuple[float, float] | None = None
    direction: str | None = None
    order: tuple[str, ...] = ()
    better: str | None = None
    figure: str = ""
    explain: str = ""
    gloss: str = ""
    trend: Measure | None = None
    readings: tuple[Reading, ...] = ()
    also: tuple[str, ...] = ()
    #: Why the statement holds by the way we built the system, not by what a run measured (spec/13 DEF-FID-6)
    by_construction: str = ""
    #: What the explanation rests on (`fidelity_explain.GRADES`), and for E the reading or value that shows it
    grade: str = ""
    evidence: str = ""
    #: Whose the difference is, for a row that does not match (`fidelity_explain.DIFFERENCE_BY`)
    difference_by: str = ""
    #: The values `explain` reads through `{name}` placeholders, each measured as a reading is (spec/13 DEF-FID-9)
    values: tuple[Reading, ...] = ()

    def __attrs_post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.id}: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if self.kind == "number" and self.number is None:
            raise ValueError(f"{self.id}: a number statement needs the seed's number")
        if self.kind == "trend" and self.direction not in rule.DIRECTIONS:
            raise ValueError(f"{self.id}: a trend needs a direction (up, down or flat)")
        if self.kind == "ranking" and (len(self.order) < 2 or self.better not in rule.BETTER):
            raise ValueError(f"{self.id}: a ranking needs an order of two or more and better = lower or higher")
        self.check_explanation()

    def check_explanation(self) -> None:
        """The grade is one of GRADES; E names a reading or value it rests on; every placeholder is measured."""
        if self.difference_by and self.difference_by not in DIFFERENCE_BY:
            raise ValueError(f"field 'difference_by': expected one of {', '.join(DIFFERENCE_BY)}, got {self.difference_by!r}")
        if self.grade and self.grade not in GRADES:
            raise ValueError(f"field 'grade': expected one of {', '.join(GRADES)}, got {self.grade!r}")
        named = {r.label for r in self.readings} | {v.label for v in self.values}
        if self.grade == "E" and self.evidence not in named:
            raise ValueError(f"field 'evidence': grade E names the reading or value that shows the cause; {self.evidence!r} is "
                             f"none of {sorted(named)}")
        readable = {"ours", *(v.label for v in self.values), *(f"reading{k}" for k in range(1, len(self.readings) + 1))}
        unknown = [n for n in placeholders(self.explain) if n not in readable]
        if unknown:
            raise ValueError(f"field 'explain': placeholders {unknown} are not in [statement.values] (nor `ours`, `readingN`)")

    @property
    def seed(self) -> str:
        return self.id.split("-", 1)[0]


class StatementError(ValueError):
    """A statement file that does not follow the schema: names the file and the statement."""


def build_measure(spec: Mapping, order: tuple[str, ...], context: str, better: str | None = None) -> fm.Measure | None:
    """The measure a `[statement.measure]` table describes."""
    if not isinstance(spec, dict):
        raise StatementError(f"{context}: field 'measure': expected a table, got {type(spec).__name__} {spec!r}")
    kind = spec.get("kind")
    if not isinstance(spec.get("where", {}), dict):
        raise StatementError(f"{context}: field 'measure.where': expected an inline table of column = value, got {spec['where']!r}")
    file = spec.get("file")
    if file is not None and (not isinstance(file, str) or Path(file).is_absolute() or ".." in Path(file).parts or "/" not in file):
        raise StatementError(f"{context}: field 'measure.file': expected BENCH/FILE inside the results folder, got {file!r}")
    where = dict(spec.get("where", {}))
    text = spec.get("where_text", "")
    try:
        if kind == "none":
            return None
        if kind == "cell":
            reduce = spec.get("reduce", "mean")
            if reduce == "mean":
                return fm.cell(spec["file"], spec["column"], text, **where)
            return fm.extreme(spec["file"], spec["column"], reduce == "max", text, **where)
        if kind == "along":
            return fm.along(spec["file"], spec["column"], spec["x"], text, **where)
        if kind == "ranked":
            return fm.ranked(spec["file"], spec["column"], spec["by"], order, spec["x"], text, **where)
        if kind == "one_against_others":
            if spec["one"] not in order or len(order) != 2 or better not in rule.BETTER:
                raise StatementError(f"{context}: one_against_others needs an order of two labels, one of them {spec['one']!r}, "
                                     "and better = lower or higher")
            return fm.one_against_others(spec["file"], spec["column"], spec["by"], order, spec["one"], tuple(spec["others"]), better,
                                         spec["x"], text, **where)
        if kind == "columns":
            names = dict(spec["names"])
            if set(names) != set(order):
                raise StatementError(f"{context}: columns' labels {sorted(names)} are not the order {list(order)}")
            return fm.columns(spec["file"], names, spec["x"], text, **where)
        if kind == "combine":
            parts = [build_measure({**spec[k], "kind": spec[k].get("kind", "cell")}, order, context, better) for k in ("a", "b")]
            return fm.derived(OPS[spec["op"]], text, *[p for p in parts if p is not None])
        if kind == "named":
            found = [getattr(m, spec["name"]) for m in NAMED if hasattr(m, spec["name"])]
            if not found:
                raise StatementError(f"{context}: no named measure {spec['name']!r} in "
                                     + " or ".join(m.__name__ for m in NAMED))
            return found[0]
    except KeyError as missing:
        raise StatementError(f"{context}: measure of kind {kind!r} lacks {missing}") from None
    raise StatementError(f"{context}: unknown measure kind {kind!r}")


def load(path: Path) -> list[Statement]:
    """The statements of one file, in order."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise StatementError(f"{path}: {error}") from None
    except UnicodeDecodeError as error:
        raise StatementError(f"{path}: not UTF-8 text (byte {error.start})") from None
    tables = data.get("statement", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise StatementError(f"{path}: field 'statement': expected [[statement]] tables")
    statements = []
    for k, raw in enumerate(tables, 1):
        context = f"{path}: statement {k} ({raw.get('id', 'no id')})"
        check_numbers(raw, context)
        order = tuple(raw.get("order", ()))
        if "measure" not in raw:
            raise StatementError(f"{context}: no [statement.measure]")
        better = raw.get("better")
        measure = build_measure(raw["measure"], order, context, better)
        trend = build_measure({**raw["trend"], "kind": "along"}, order, context) if "trend" in raw else None
        readings = tuple(Reading(r["label"], build_measure(r["measure"], order, context, better)) for r in raw.get("reading", []))
        band = raw.get("band")
        values_spec = raw.get("values", {})
        if not isinstance(values_spec, dict) or not all(isinstance(v, dict) for v in values_spec.values()):
            raise StatementError(f"{context}: field 'values': expected a table of name = {{measure}}")
        values = tuple(Reading(name, build_measure(spec, order, context, better)) for name, spec in values_spec.items())
        also = raw.get("also", [])
        if not isinstance(also, list) or not all(isinstance(a, str) and a.strip() for a in also):
            raise StatementError(f"{context}: field 'also': expected a list of the other places the seed says it, got {also!r}")
        try:
            statements.append(Statement(
                id=raw["id"], section=raw["section"], quote=raw["quote"], kind=raw["kind"], value=raw["value"], measure=measure,
                number=raw.get("number"), band=tuple(band) if band else None, direction=raw.get("direction"), order=order,
                better=raw.get("better"), figure=raw.get("figure", ""), explain=raw.get("explain", ""), gloss=raw.get("gloss", ""),
                trend=trend, readings=readings, also=tuple(also), by_construction=raw.get("by_construction", ""),
                grade=raw.get("grade", ""), evidence=raw.get("evidence", ""), values=values,
                difference_by=raw.get("difference_by", "")))
        except (KeyError, ValueError) as error:
            raise StatementError(f"{context}: {error}") from None
    return statements


def check_numbers(raw: dict, context: str) -> None:
    """A statement's `number` is a finite number and its `band` two of them, low first."""
    def finite(value: object) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

    if "number" in raw and not finite(raw["number"]):
        raise StatementError(f"{context}: field 'number': expected a finite number, got {raw['number']!r}")
    band = raw.get("band")
    if band is not None and not (isinstance(band, list) and len(band) == 2 and all(map(finite, band)) and band[0] <= band[1]):
        raise StatementError(f"{context}: field 'band': expected [low, high], two finite numbers, got {band!r}")


#: Why a statement of a seed is not a row (spec/13 DEF-FID-8), as each file's LEFT OUT list gives it: `# ID [reason] why`
LEFT_OUT_REASONS = ("setting", "definition", "worked example", "motivation", "aim", "future work", "restatement", "survey",
                    "qualitative", "missing", "pending")
_LEFT_OUT = re.compile(r"^# (\S+)\s+\[([a-z ]+)\]\s+\S")


def left_out(path: Path) -> list[tuple[str, str]]:
    """(id, reason) of every statement a file's LEFT OUT list leaves out (none if it has no list: a user's own statement
    files need none). Every line after the list's heading is an entry or its continuation (`#   ...`), and every reason
    is one of LEFT_OUT_REASONS (StatementError otherwise)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("# LEFT OUT")), None)
    if start is None:
        return []
    entries = []
    for number, line in enumerate(lines[start + 1:], start + 2):
        found = _LEFT_OUT.match(line)
        if found and found.group(2) in LEFT_OUT_REASONS:
            entries.append((found.group(1), found.group(2)))
        elif not (line.startswith("#   ") or not line.strip()):
            raise StatementError(f"{path}:{number}: expected '# ID [reason] why' (a reason of {', '.join(LEFT_OUT_REASONS)}) "
                                 f"or a continuation '#   ...', got {line[:60]!r}")
    return entries


def left_out_all(folder: Path = FOLDER) -> list[tuple[str, str]]:
    return [entry for f in sorted(Path(folder).glob("seed*.toml")) for entry in left_out(f)]


def load_all(folder: Path = FOLDER) -> list[Statement]:
    """Every statement of every `seed*.toml` in the folder, ids unique."""
    files = sorted(Path(folder).glob("seed*.toml"))
    if not files:
        raise StatementError(f"{folder}: no seed*.toml statement files")
    statements = [s for f in files for s in load(f)]
    seen: set[str] = set()
    for s in statements:
        if s.id in seen:
            raise StatementError(f"{folder}: statement id {s.id} used twice")
        seen.add(s.id)
    return statements
