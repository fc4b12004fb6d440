"""What a fidelity statement reads from a results folder (issue 33): our
number, our series along a parameter, or our means at several points, each
from the CSVs and summary.json files the benches write.

`Results` reads a folder laid out as `benchmarks/results/` (one subfolder
per bench); `Ours` is what a statement's measure returns. A measure that
finds no rows matching its `where` returns None: the statement is then
*not reproduced*. A file that cannot be read whole is never taken for
"no rows" (issue 51): a missing file is `FileAbsent`, and an empty or
truncated CSV, a column or `where` key its header lacks, a cell read as a
number that is not a finite one (nan, inf, 1e999), or a summary.json
that is not JSON is an `InputError` naming file:line and field.

>>> ours = Ours(mean=0.44, ci95=0.01, where="N = 50")
>>> ours.text()
'0.44 ± 0.01 (N = 50)'
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Callable, Mapping, Sequence

import attrs

from subsum.core.errors import InputError


@attrs.frozen
class Ours:
    """Our side of a statement: a mean (± its 95% half-width), a series
    along a parameter [(x, mean)], or the means of the ranked names at each
    point; `where` says which rows."""

    mean: float | None = None
    ci95: float | None = None
    series: tuple[tuple[float, float], ...] = ()
    points: tuple[Mapping[str, float], ...] = ()
    where: str = ""
    #: The 95% half-widths of `points`' means, point by point, where the CSV has them (a `{column}_ci95` column)
    point_ci95: tuple[Mapping[str, float], ...] = ()

    def text(self) -> str:
        parts = []
        if self.mean is not None:
            parts.append(f"{fmt(self.mean)}" + (f" ± {fmt(self.ci95)}" if self.ci95 else ""))
        if self.series:
            parts.append(", ".join(f"{fmt(x)}: {fmt(y)}" for x, y in self.series))
        if self.points:
            shown = [*self.points[:1], *self.points[-1:]] if len(self.points) > 2 else list(self.points)
            parts.append((" … " if len(self.points) > 2 else "; ").join(", ".join(f"{k} {fmt(v)}" for k, v in p.items()) for p in shown))
        return " ".join(parts) + (f" ({self.where})" if self.where else "")


def fmt(value: float | None) -> str:
    """A number as the table shows it: three significant digits."""
    if value is None:
        return "–"
    if value == int(value) and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.3g}"


def same(cell: str, wanted) -> bool:
    """A CSV cell equals a wanted value: as numbers when both are numbers, else as text.
    A cell compared with a number that reads as nan or infinity is refused (`number`)."""
    try:
        float(wanted)
        float(cell)
    except (TypeError, ValueError):
        return cell == str(wanted)
    return math.isclose(number(cell), float(wanted), rel_tol=1e-9, abs_tol=1e-12)


class FileAbsent(InputError):
    """A file a statement reads is not there. `subsum fidelity` refuses it
    (exit 2), or with --allow-missing marks the statement *not measured (file
    absent)*: never *not reproduced*, which says our results measured nothing."""


def read_csv(path: Path) -> tuple[tuple[str, ...], list[Row]]:
    """A bench's CSV as (header, rows), refused unless it is whole: a header
    of distinct names, at least one row, every row with as many fields as
    the header (a short one names its first missing field), and a newline
    at the end: benches end every line with one, so a last line without it
    was cut, even when its fields happen to be all there."""
    if not path.is_file():
        raise InputError(str(path), None, None, "is not a regular file")
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except OSError as error:
        raise InputError(str(path), None, None, f"cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise InputError(str(path), data.count(b"\n", 0, error.start) + 1, None, f"not UTF-8 text (byte {error.start})") from None
    if not text.strip():
        raise InputError(str(path), None, None, "empty file: no header line (the bench wrote nothing, or the file was cut)")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[Row] = []
    try:
        header = tuple(next(reader))
        for position, name in enumerate(header):
            if not name or name in header[:position]:
                raise InputError(str(path), 1, name or None, "an empty or repeated column name in the header")
        start, fields = reader.line_num + 1, list(header)
        for fields in reader:
            if len(fields) != len(header):
                short = len(fields) < len(header)
                raise InputError(str(path), start, header[len(fields)] if short else None,
                                 f"{'missing' if short else 'extra fields'}: the row has {len(fields)} fields and the header "
                                 f"{len(header)} (a cut or malformed row)")
            rows.append(Row(dict(zip(header, fields)), str(path), start))
            start = reader.line_num + 1
    except csv.Error as error:
        raise InputError(str(path), reader.line_num, None, f"not a CSV table: {error}") from None
    if not text.endswith("\n"):
        raise InputError(str(path), reader.line_num, header[len(fields) - 1] if fields else None,
                         "the file ends inside this field, with no newline: it is truncated")
    if not rows:
        raise InputError(str(path), 2, None, "a header and no rows (the bench measured nothing, or the file was cut)")
    return header, rows


def read_json(path: Path) -> dict:
    """A summary.json as an object; one that is not is refused naming the file (and line)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(str(path), error.lineno, None, f"not valid JSON: {error.msg} (column {error.colno})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(str(path), None, None, f"cannot read: {getattr(error, 'strerror', None) or error}") from None
    if not isinstance(data, dict):
        raise InputError(str(path), None, None, f"not a JSON object but {type(data).__name__}")
    return data


class Results:
    """A results folder: `rows(file, **where)` filters a CSV, `json(file)` reads a summary."""

    def __init__(self, root: Path, folders: Mapping[str, Path] | None = None) -> None:
        self.root = Path(root)
        self.folders = dict(folders or {})  # a bench's name -> the folder its files are in, if not root/name
        self._csv: dict[str, tuple[tuple[str, ...], list[Row]]] = {}

    def path(self, file: str) -> Path:
        """Where `bench/file.csv` is."""
        bench, _, name = file.partition("/")
        return self.folders[bench] / name if bench in self.folders else self.root / file

    def table(self, file: str) -> tuple[tuple[str, ...], list[Row]]:
        """The header and rows of a CSV, read once (`read_csv`); FileAbsent if it is not there."""
        if file not in self._csv:
            path = self.path(file)
            if not path.exists():
                raise FileAbsent(str(path), None, None, "no such file")
            self._csv[file] = read_csv(path)
        return self._csv[file]

    def rows(self, file: str, *reads: str, **where) -> list[Row]:
        """The rows of `file` whose cells equal `where`'s values. Every
        `where` key and every column named in `reads` must be in the header."""
        header, rows = self.table(file)
        for column in (*where, *reads):
            if column not in header:
                raise InputError(str(self.path(file)), 1, column, "no such column in the header; the statement reads it")
        return [r for r in rows if all(same(r[k], v) for k, v in where.items())]

    def json(self, file: str) -> dict:
        path = self.path(file)
        if not path.exists():
            raise FileAbsent(str(path), None, None, "no such file")
        return read_json(path)

    def quick(self) -> bool | None:
        """Whether the results came from --quick runs: True if any bench's summary says so, None if none says.
        Every */summary.json is read, and one that is not a JSON object is refused."""
        said = []
        for path in sorted(self.root.glob("*/summary.json")):
            parameters = read_json(path).get("parameters", {})
            if not isinstance(parameters, dict):
                raise InputError(str(path), None, "parameters", "not a JSON object")
            if parameters.get("quick") not in (None, True, False):
                raise InputError(str(path), None, "parameters.quick", f"expected true or false, got {parameters['quick']!r}")
            said.append(parameters.get("quick"))
        said = [s for s in said if s is not None]
        return any(said) if said else None


Measure = Callable[[Results], "Ours | None"]


class Cell(str):
    """A CSV cell that knows where it is, for error messages."""

    path: str
    line: int
    field: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}: field {self.field!r}"


class Row(dict):
    """A CSV row whose cells say where they are (file:line: field 'name').
    Reading a column the row lacks is an InputError naming the file and column."""

    def __init__(self, cells: Mapping[str, str], path: str, line: int) -> None:
        super().__init__(cells)
        self.path, self.line = path, line

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def __getitem__(self, column: str) -> str:
        if column not in self:
            raise InputError(self.path, 1, column, "no such column in the header; the statement reads it")
        return self._cell(column, super().__getitem__(column))

    def get(self, column, default=None):
        return self[column]

    def _cell(self, column: str, text: str) -> str:
        cell = Cell(text)
        cell.path, cell.line, cell.field = self.path, self.line, column
        return cell


def number(value: str) -> float:
    """A cell as a number; a cell that is not one, or not a finite one
    (nan, inf, or 1e999, which float() reads as inf), is an error naming
    its file, line and field."""
    try:
        result = float(value)
    except ValueError:
        result = None
    if result is not None and math.isfinite(result):
        return result
    said = "not a number" if result is None else "not a finite number"
    if isinstance(value, Cell):
        raise InputError(value.path, value.line, value.field, f"{said}: {str(value)!r}")
    raise ValueError(f"a results file: {said}: {value!r}")
def cell(file: str, column: str, where_text: str = "", **where) -> Measure:
    """Our mean of `column` over the rows matching `where` (its `column_ci95` beside it when there is one row)."""
    def measure(results: Results) -> Ours | None:
        found = [r for r in results.rows(file, column, **where) if r[column] != ""]
        if not found:
            return None
        values = [number(r[column]) for r in found]
        ci = found[0][f"{column}_ci95"] if len(found) == 1 and f"{column}_ci95" in found[0] else None
        return Ours(mean=sum(values) / len(values), ci95=number(ci) if ci else None, where=where_text or describe(where))
    return measure


def extreme(file: str, column: str, largest: bool = True, where_text: str = "", **where) -> Measure:
    """The largest (or smallest) `column` over the rows matching `where`."""
    def measure(results: Results) -> Ours | None:
        values = [number(r[column]) for r in results.rows(file, column, **where) if r[column] != ""]
        if not values:
            return None
        return Ours(mean=max(values) if largest else min(values), where=where_text or f"{'max' if largest else 'min'} over {describe(where)}")
    return measure


def along(file: str, column: str, x: str, where_text: str = "", **where) -> Measure:
    """Our series of `column` against `x` (the mean over rows sharing an x)."""
    def measure(results: Results) -> Ours | None:
        grouped: dict[float, list[float]] = {}
        for r in results.rows(file, column, x, **where):
            if r[column] != "":
                grouped.setdefault(number(r[x]), []).append(number(r[column]))
        if len(grouped) < 2:
            return None
        series = tuple((k, sum(v) / len(v)) for k, v in sorted(grouped.items()))
        return Ours(series=series, where=where_text or f"against {x}, {describe(where)}")
    return measure


def point_key(r: Mapping, x: str | Sequence[str]) -> tuple[float, ...]:
    """A row's point: the value of `x`, or of each of its columns."""
    return tuple(number(r[c]) for c in ([x] if isinstance(x, str) else x))


def by_point(results: Results, file: str, column: str, by: str, x: str | Sequence[str], where: Mapping) -> dict[tuple, dict[str, float]]:
    """point -> value of `by` -> `column`, over the rows `where` selects. Two
    rows at one point with one `by` value are an error of the statement
    (it must fix every other parameter, or name it in `x`)."""
    table: dict[tuple, dict[str, float]] = {}
    for r in results.rows(file, column, by, *([x] if isinstance(x, str) else x), **where):
        if r[column] == "":
            continue
        slot = table.setdefault(point_key(r, x), {})
        if r[by] in slot:
            raise ValueError(f"{file}: two rows with {by} = {r[by]} at {x} = {point_key(r, x)} ({describe(where)}): "
                             "fix the other parameters in `where` or add them to `x`")
        slot[str(r[by])] = number(r[column])
    return table


def ranked(file: str, column: str, by: str, names: Sequence[str], x: str | Sequence[str], where_text: str = "", **where) -> Measure:
    """Our means of `column` for each of `names` (the values of column `by`)
    at every point (a value of `x`, or of each column `x` lists) where all are measured."""
    def measure(results: Results) -> Ours | None:
        table = by_point(results, file, column, by, x, where)
        keys = [k for k, p in sorted(table.items()) if all(n in p for n in names)]
        if not keys:
            return None
        points = tuple({n: table[k][n] for n in names} for k in keys)
        halves = half_widths(results, file, column, by, x, where)
        point_ci95 = tuple({n: halves[k][n] for n in names if n in halves.get(k, {})} for k in keys) if halves else ()
        return Ours(points=points, where=where_text or f"at each {x}, {describe(where)}", point_ci95=point_ci95)
    return measure


def half_widths(results: Results, file: str, column: str, by: str, x: str | Sequence[str], where: Mapping) -> dict[tuple, dict[str, float]]:
    """point -> value of `by` -> the 95% half-width of `column` (its `{column}_ci95` column), or {} if the CSV has none."""
    header, _ = results.table(file)
    return by_point(results, file, f"{column}_ci95", by, x, where) if f"{column}_ci95" in header else {}


def one_against_others(file: str, column: str, by: str, order: Sequence[str], one: str, others: Sequence[str], better: str,
                       x: str | Sequence[str], where_text: str = "", **where) -> Measure:
    """A ranking of one value of `by` against the rest ("all answers the
    most", "all loads the most"): at each point, `one` against its strongest
    rival among `others`, the best of them when the order puts `one` first,
    the worst when it puts `one` last. `order` has two labels: `one` and
    the label the others go by."""
    rival_label = next(label for label in order if label != one)
    one_first = order[0] == one

    def measure(results: Results) -> Ours | None:
        table = by_point(results, file, column, by, x, where)
        halves = half_widths(results, file, column, by, x, where)
        points, point_ci95 = [], []
        for key, p in sorted(table.items()):
            if one in p and all(o in p for o in others):
                best, worst = (max, min) if better == "higher" else (min, max)
                rival = (best if one_first else worst)(others, key=lambda o: p[o])
                points.append({one: p[one], rival_label: p[rival]})
                half = halves.get(key, {})
                point_ci95.append({label: half[name] for label, name in ((one, one), (rival_label, rival)) if name in half})
        if not points:
            return None
        return Ours(points=tuple(points), where=where_text or f"at each {x}, {describe(where)}",
                    point_ci95=tuple(point_ci95) if halves else ())
    return measure


def columns(file: str, names: Mapping[str, str], x: str, where_text: str = "", **where) -> Measure:
    """Our means of several columns (label -> column) at every `x`: a ranking across columns of one row. Where
    each point is one row and the CSV has a column's `{column}_ci95`, its half-width goes beside the mean."""
    def measure(results: Results) -> Ours | None:
        header, _ = results.table(file)
        table: dict[float, dict[str, list[float]]] = {}
        halves: dict[float, dict[str, float]] = {}
        for r in results.rows(file, x, *names.values(), **where):
            if all(r[c] != "" for c in names.values()):
                slot = table.setdefault(number(r[x]), {})
                for label, c in names.items():
                    slot.setdefault(label, []).append(number(r[c]))
                    if f"{c}_ci95" in header and r[f"{c}_ci95"] != "":
                        halves.setdefault(number(r[x]), {})[label] = number(r[f"{c}_ci95"])
        keys = sorted(table)
        points = tuple({label: sum(v) / len(v) for label, v in table[k].items()} for k in keys)
        one_row = all(len(v) == 1 for k in keys for v in table[k].values())
        point_ci95 = tuple(halves.get(k, {}) for k in keys) if halves and one_row else ()
        return Ours(points=points, where=where_text or f"at each {x}, {describe(where)}", point_ci95=point_ci95) if points else None
    return measure


def describe(where: Mapping) -> str:
    return ", ".join(f"{k} = {v}" for k, v in where.items()) or "every row"


def derived(combine: Callable[..., float], where_text: str, *parts: Measure) -> Measure:
    """A number computed from other measures' means (a gap, a ratio): None if any part is missing."""
    def measure(results: Results) -> Ours | None:
        found = [p(results) for p in parts]
        if any(f is None or f.mean is None for f in found):
            return None
        return Ours(mean=combine(*(f.mean for f in found if f is not None)), where=where_text)
    return measure


def pointwise(combine: Callable[..., float], where_text: str, *parts: Measure) -> Measure:
    """A series computed pointwise from other measures' series (their shared x values)."""
    def measure(results: Results) -> Ours | None:
        found = [p(results) for p in parts]
        if any(f is None or not f.series for f in found):
            return None
        shared = sorted(set.intersection(*(set(x for x, _ in f.series) for f in found if f is not None)))
        by_x = [dict(f.series) for f in found if f is not None]
        series = tuple((x, combine(*(s[x] for s in by_x))) for x in shared)
        return Ours(series=series, where=where_text) if len(series) >= 2 else None
    return measure
