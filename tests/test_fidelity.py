"""benchmarks/FIDELITY.md (issue 33): the verdict rule, the statement
files, and the committed table as the generator writes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from subsum.fidelity import report as fidelity
from subsum.fidelity import load as fidelity_load
from subsum.fidelity import verdict as rule
from subsum.fidelity import measure as fidelity_measure
from subsum.fidelity.measure import Ours, Results

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("value, band, ours, expected", [
    (6.0, None, 6.9, rule.MATCHES), (6.0, None, 6.91, rule.DIFFERS), (6.0, None, 5.1, rule.MATCHES), (6.0, None, 5.09, rule.DIFFERS),
    (4.0, (4.0, 8.0), 7.9, rule.MATCHES), (4.0, (4.0, 8.0), 8.1, rule.DIFFERS), (0.0, (0.0, 0.05), 0.04, rule.MATCHES),
    (0.0, None, 0.0, rule.MATCHES), (0.0, None, 0.01, rule.DIFFERS), (1.0, None, None, rule.NOT_REPRODUCED),
])
def test_a_number_matches_within_its_stated_range_or_fifteen_percent(value, band, ours, expected):
    assert rule.number_verdict(value, band, ours) == expected


def test_a_number_off_its_band_differs_and_its_direction_is_a_note_beside_it():
    up = [(5, 1.0), (25, 8.0), (50, 24.0)]
    assert rule.number_verdict(9.0, None, 24.0) == rule.DIFFERS
    assert rule.direction_note("up", up) == "our series goes up, as the seed says"
    assert rule.direction_note("down", up) == "our series goes up; the seed says down"
    assert rule.direction_note(None, up) == "" and rule.direction_note("up", []) == ""


# --- The three changes of issue 54 (spec/13 DEF-FID-2): each planted case is one the rule before it let through ---

def test_planted_a_number_far_off_its_band_differs_though_its_series_goes_the_stated_way():
    down = [(1, 0.9), (2, 0.5), (3, 0.2)]
    assert rule.number_verdict(5.0, None, 0.2) == rule.DIFFERS  # 0.2 against 5: the old rule said same trend (down)
    assert rule.number_verdict(1000.0, (0.0, 1000.0), 133.0) == rule.MATCHES  # "up to 1000": 133 is within its stated range
    assert rule.direction_note("down", down) == "our series goes down, as the seed says"


def test_planted_a_ranking_needs_three_quarters_of_its_points_each_failure_inside_the_intervals():
    order, good, bad = ["soha", "sc", "server"], {"soha": 1.0, "sc": 2.0, "server": 3.0}, {"soha": 2.0, "sc": 1.0, "server": 3.0}
    assert rule.ranking_verdict(order, "lower", [good, good, good, bad, bad]) == rule.DIFFERS  # 3 of 5: the old rule said same trend
    assert rule.ranking_verdict(order, "lower", [good, good, bad]) == rule.DIFFERS  # 2 of 3
    apart = {"soha": 0.1, "sc": 0.1, "server": 0.1}  # soha 2.0 against sc 1.0: the intervals do not meet
    close = {"soha": 0.6, "sc": 0.5, "server": 0.1}  # they do (the gap of 1.0 within 0.6 + 0.5)
    assert rule.ranking_verdict(order, "lower", [good] * 3 + [bad], [{}] * 3 + [apart]) == rule.DIFFERS
    assert rule.ranking_verdict(order, "lower", [good] * 3 + [bad], [{}] * 3 + [close]) == rule.SAME_TREND
    assert rule.ranking_verdict(order, "lower", [good] * 3 + [bad]) == rule.DIFFERS  # no intervals: a failure cannot be shown inside


def test_planted_a_trend_needs_three_quarters_of_its_steps_not_its_two_ends():
    one_up_eight_down = [(0, 1.0), (1, 10.0), *[(k, 10.0 - 0.5 * (k - 1)) for k in range(2, 10)]]  # ends at 6.0: above its start
    assert rule.trend_verdict("up", one_up_eight_down) == rule.DIFFERS  # the old rule: same trend (first and last go up)
    assert rule.trend_verdict("down", [(k, -k + (3.0 if k == 4 else 0.0)) for k in range(6)]) == rule.SAME_TREND  # 4 of 5 steps


@pytest.mark.parametrize("direction, series, expected", [
    ("up", [(1, 1.0), (2, 2.0), (3, 3.0)], rule.MATCHES), ("up", [(1, 1.0), (2, 0.9), (3, 3.0)], rule.DIFFERS),
    ("up", [(1, 1.0), (2, 2.0), (3, 1.9), (4, 3.0), (5, 4.0)], rule.SAME_TREND),
    ("up", [(1, 3.0), (2, 2.0), (3, 1.0)], rule.DIFFERS), ("down", [(3, 1.0), (1, 3.0), (2, 2.0)], rule.MATCHES),
    ("flat", [(1, 1.0), (2, 1.1), (3, 0.95)], rule.MATCHES), ("flat", [(1, 1.0), (2, 2.0)], rule.DIFFERS),
    ("up", [(1, 1.0)], rule.NOT_REPRODUCED), ("up", None, rule.NOT_REPRODUCED),
])
def test_a_trend_matches_step_by_step_and_keeps_its_trend_at_three_quarters_of_its_steps(direction, series, expected):
    assert rule.trend_verdict(direction, series) == expected


def test_a_ranking_matches_everywhere_and_is_strict():
    order, good = ["soha", "sc", "server"], {"soha": 1.0, "sc": 2.0, "server": 3.0}
    assert rule.ranking_verdict(order, "lower", [good, good]) == rule.MATCHES
    assert rule.ranking_verdict(order, "higher", [good]) == rule.DIFFERS
    assert rule.ranking_verdict(order, "lower", [{"soha": 1.0, "sc": 1.0, "server": 3.0}]) == rule.DIFFERS  # a tie is no order
    assert rule.ranking_verdict(order, "lower", []) == rule.NOT_REPRODUCED
    with pytest.raises(ValueError, match="lower or higher"):
        rule.ranking_verdict(order, "smaller", [good])


def test_measures_read_the_rows_they_name(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "r.csv").write_text("x,policy,y,y_ci95\n1,a,1.0,0.1\n2,a,2.0,0.2\n1,b,3.0,0.1\n2,b,1.0,0.1\n")
    results = Results(tmp_path)
    from subsum.fidelity import measure as fm

    assert fm.cell("b/r.csv", "y", x=2, policy="a")(results) == Ours(mean=2.0, ci95=0.2, where="x = 2, policy = a")
    assert fm.extreme("b/r.csv", "y")(results).mean == 3.0
    assert fm.along("b/r.csv", "y", "x", policy="a")(results).series == ((1.0, 1.0), (2.0, 2.0))
    assert fm.ranked("b/r.csv", "y", "policy", ("a", "b"), "x")(results).points == ({"a": 1.0, "b": 3.0}, {"a": 2.0, "b": 1.0})
    assert fm.derived(lambda a, b: a - b, "gap", fm.cell("b/r.csv", "y", x=1, policy="b"), fm.cell("b/r.csv", "y", x=1, policy="a"))(results).mean == 2.0
    assert fm.cell("b/r.csv", "y", x=9)(results) is None  # no row matches: not reproduced
    with pytest.raises(fm.FileAbsent, match="missing.csv: no such file"):  # an absent file is never "no rows" (issue 51)
        fm.cell("missing.csv", "y")(results)


def test_rankings_over_several_parameters_and_one_against_its_strongest_rival(tmp_path):
    """`ranked` over a list of columns makes each combination a point, and
    refuses two rows at one point; `one_against_others` sets one value
    against the best of the rest when the order puts it first, the worst
    when it puts it last."""
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "p.csv").write_text("n,a,placement,y\n20,1,all,5\n20,1,leaf,7\n20,1,single,2\n50,1,all,9\n50,1,leaf,4\n50,1,single,8\n")
    results = Results(tmp_path)
    from subsum.fidelity import measure as fm

    assert len(fm.ranked("c/p.csv", "y", "placement", ("all", "leaf"), ["n", "a"])(results).points) == 2
    with pytest.raises(ValueError, match="two rows with placement = all"):
        fm.ranked("c/p.csv", "y", "placement", ("all", "leaf"), "a")(results)
    best = fm.one_against_others("c/p.csv", "y", "placement", ("all", "others"), "all", ("leaf", "single"), "higher", ["n", "a"])
    assert best(results).points == ({"all": 5.0, "others": 7.0}, {"all": 9.0, "others": 8.0})
    worst = fm.one_against_others("c/p.csv", "y", "placement", ("others", "all"), "all", ("leaf", "single"), "lower", ["n", "a"])
    assert worst(results).points == ({"all": 5.0, "others": 7.0}, {"all": 9.0, "others": 8.0})
    assert rule.ranking_verdict(("all", "others"), "higher", best(results).points) == rule.DIFFERS
    assert rule.ranking_verdict(("others", "all"), "lower", worst(results).points) == rule.DIFFERS
    lowest = fm.one_against_others("c/p.csv", "y", "placement", ("all", "others"), "all", ("leaf", "single"), "lower", ["n", "a"])
    assert lowest(results).points == ({"all": 5.0, "others": 2.0}, {"all": 9.0, "others": 4.0})


def test_a_statement_file_that_breaks_the_schema_is_refused_with_its_name(tmp_path):
    bad = tmp_path / "seed999.toml"
    bad.write_text('[[statement]]\nid = "999-a"\nsection = "§1"\nquote = "q"\nkind = "ranking"\nvalue = "v"\norder = ["a"]\n'
                   'better = "lower"\n[statement.measure]\nkind = "none"\n')
    with pytest.raises(fidelity_load.StatementError, match=r"seed999.toml: statement 1 \(999-a\).*order of two"):
        fidelity_load.load(bad)
    bad.write_text('[[statement]]\nid = "999-a"\nsection = "§1"\nquote = "q"\nkind = "number"\nvalue = "v"\nnumber = 1\n'
                   '[statement.measure]\nkind = "cell"\nfile = "b/f.csv"\n')
    with pytest.raises(fidelity_load.StatementError, match="lacks 'column'"):
        fidelity_load.load(bad)
    bad.write_text('[[statement]\n')
    with pytest.raises(fidelity_load.StatementError, match="seed999.toml"):
        fidelity_load.load(bad)
    for file in ("../../etc/passwd", "/etc/hostname", "f.csv"):  # issue 51: a measure reads inside --results only
        bad.write_text('[[statement]]\nid = "999-a"\nsection = "§1"\nquote = "q"\nkind = "number"\nvalue = "v"\nnumber = 1\n'
                       f'[statement.measure]\nkind = "cell"\nfile = "{file}"\ncolumn = "c"\n')
        with pytest.raises(fidelity_load.StatementError, match="field 'measure.file': expected BENCH/FILE inside the results folder"):
            fidelity_load.load(bad)


def test_a_statement_said_in_several_places_is_one_row_naming_the_others(tmp_path):
    text = ('[[statement]]\nid = "999-a"\nsection = "§1"\nquote = "q"\nkind = "number"\nvalue = "v"\nnumber = 1\n'
            'also = {also}\n[statement.measure]\nkind = "none"\n')
    path = tmp_path / "seed999.toml"
    path.write_text(text.format(also='["§6 (was 999-b)"]'))
    (statement,) = fidelity_load.load(path)
    assert statement.also == ("§6 (was 999-b)",)
    assert "| 999-a | §1; also §6 (was 999-b) |" in fidelity.markdown(fidelity.evaluate([statement], Results(tmp_path)), "x", None)
    path.write_text(text.format(also='"§6"'))
    with pytest.raises(fidelity_load.StatementError, match="field 'also': expected a list"):
        fidelity_load.load(path)
    ids = [s.id for s in fidelity_load.load_all()]
    assert len(ids) == len(set(ids)) and not {"000-6-a", "000-6-c", "000-6-e", "004-4.3-a"} & set(ids)


def test_the_committed_table_is_what_the_generator_writes_from_the_committed_results(tmp_path):
    """benchmarks/FIDELITY.md and fidelity.json are generated, never edited:
    regenerated from benchmarks/results/ they come out byte for byte the
    same; every statement has a computed verdict, and every row that
    differs or is not reproduced names its explanation."""
    written = fidelity.run(ROOT / "benchmarks" / "results", tmp_path / "FIDELITY.md")
    committed = (ROOT / "benchmarks" / "FIDELITY.md").read_text(encoding="utf-8")
    fresh = (tmp_path / "FIDELITY.md").read_text(encoding="utf-8").replace(str(ROOT / "benchmarks" / "results"), "benchmarks/results")
    assert fresh == committed, "benchmarks/FIDELITY.md is stale: run `make fidelity`"
    assert json.loads((ROOT / "benchmarks" / "fidelity.json").read_text(encoding="utf-8")) == written
    assert written["unexplained"] == []
    statements = fidelity_load.load_all()
    assert len(written["statements"]) == len(statements) and {s.seed for s in statements} == {"000", "001", "003", "004"}
    assert all(row["verdict"] in fidelity.markings(False) for row in written["statements"])
    assert sum(written["counts"]["all"].values()) == len(statements)


def test_subsum_fidelity_writes_the_table_and_refuses_a_broken_statement_file(tmp_path):
    from click.testing import CliRunner

    from subsum.cli import main

    runner = CliRunner()
    result = runner.invoke(main, ["fidelity", "--results", str(ROOT / "benchmarks" / "results"), "--output", str(tmp_path / "F.md"),
                                  "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["counts"]["all"] and (tmp_path / "F.md").is_file() and (tmp_path / "fidelity.json").is_file()
    broken = tmp_path / "statements"
    broken.mkdir()
    (broken / "seed000.toml").write_text('[[statement]]\nid = "000-a"\n')
    result = runner.invoke(main, ["fidelity", "--statements", str(broken), "--output", str(tmp_path / "G.md")])
    assert result.exit_code == 2 and "seed000.toml: statement 1 (000-a)" in result.output + (result.stderr or ""), result.output
    assert not (tmp_path / "G.md").exists()  # no partial output


def test_a_results_cell_that_is_not_a_number_is_named_with_its_file_line_and_field(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "r.csv").write_text("x,y\n1,2.0\n2,oops\n")
    from subsum.fidelity import measure as fm

    with pytest.raises(ValueError, match=r"b/r.csv:3: field 'y': not a number: 'oops'"):
        fm.cell("b/r.csv", "y")(Results(tmp_path))


def test_quick_results_say_so_at_the_top(tmp_path):
    (tmp_path / "client-server").mkdir()
    (tmp_path / "client-server" / "summary.json").write_text('{"parameters": {"quick": true}}')
    fidelity.run(tmp_path, tmp_path / "F.md", allow_missing=True)  # no CSVs: every statement is not measured (file absent)
    assert "**QUICK RESULTS.**" in (tmp_path / "F.md").read_text()


def measure_tables(statement: dict):
    """Every measure table of a raw TOML statement (its measure, trend and readings, and the parts of a combined one)."""
    tables = [statement.get("measure"), statement.get("trend"), *[r.get("measure") for r in statement.get("reading", [])]]
    while tables:
        table = tables.pop()
        if isinstance(table, dict):
            tables += [table.get("a"), table.get("b")] if table.get("kind") == "combine" else []
            yield table


def test_every_column_and_where_key_a_statement_reads_is_in_the_committed_csv_and_selects_rows():
    """A column or `where` key that disappears from a bench's CSV (or a `where` that no longer selects a row) would turn
    a verdict into *not reproduced* or refuse the run; the committed results must have every one (spec/13 DEF-FID-4)."""
    import csv
    import tomllib

    problems, checked = [], 0
    for path in sorted((ROOT / "subsum" / "fidelity" / "statements").glob("seed*.toml")):
        for statement in tomllib.loads(path.read_text(encoding="utf-8"))["statement"]:
            for table in measure_tables(statement):
                if "file" not in table:
                    continue
                with open(ROOT / "benchmarks" / "results" / table["file"], newline="") as fh:
                    rows = list(csv.DictReader(fh))
                header = set(rows[0]) if rows else set()
                reads = [table[k] for k in ("column", "x", "by") if isinstance(table.get(k), str)]
                reads += list(table.get("names", {}).values()) + list(table.get("where", {}))
                problems += [f"{statement['id']}: {table['file']} has no column {c!r}" for c in reads if c not in header]
                where = {k: str(v) for k, v in table.get("where", {}).items()}
                if not any(all(fidelity_measure.same(r[k], v) for k, v in where.items()) for r in rows if set(where) <= set(r)):
                    problems.append(f"{statement['id']}: {table['file']}: no row has {where}")
                checked += 1
    assert checked > 100
    assert not problems, "\n".join(problems)


def test_a_row_true_by_construction_is_counted_apart_and_says_why():
    rows = fidelity.evaluate(fidelity_load.load_all(), Results(ROOT / "benchmarks" / "results"))
    marked = [r for r in rows if r.statement.by_construction]
    assert len(marked) >= 10 and all(r.verdict == fidelity.BY_CONSTRUCTION for r in marked)
    assert all(fidelity.explanation(r).startswith("By construction: ") for r in marked)
    tally = fidelity.counts(rows)["all"]
    assert tally[fidelity.BY_CONSTRUCTION] == len(marked) and sum(tally.values()) == len(rows)


def test_every_left_out_statement_gives_one_of_the_stated_reasons_and_the_table_counts_them(tmp_path):
    left = fidelity_load.left_out_all()
    for path in sorted((ROOT / "subsum" / "fidelity" / "statements").glob("seed*.toml")):  # every seed's file has its list
        assert "\n# LEFT OUT" in path.read_text(encoding="utf-8") and fidelity_load.left_out(path), path.name
    assert len(left) >= 50 and {reason for _, reason in left} <= set(fidelity_load.LEFT_OUT_REASONS)
    assert not {statement_id for statement_id, _ in left} & {s.id for s in fidelity_load.load_all()}  # left out, not a row too
    table = (ROOT / "benchmarks" / "FIDELITY.md").read_text(encoding="utf-8")
    survey = sum(reason == "survey" for _, reason in left)
    assert "## Left out, by reason" in table and f"| survey | 0 | 0 | 0 | {survey} | {survey} |" in table
    bad = tmp_path / "seed999.toml"
    bad.write_text("# LEFT OUT\n# 999-a [setting] an input.\n# 999-b because it is dull\n")
    with pytest.raises(fidelity_load.StatementError, match=r"seed999.toml:3: expected '# ID \[reason\] why'"):
        fidelity_load.left_out(bad)
    bad.write_text("# LEFT OUT\n# 999-a [boring] an input.\n")
    with pytest.raises(fidelity_load.StatementError, match="seed999.toml:2"):
        fidelity_load.left_out(bad)


def test_named_rankings_carry_their_intervals_so_a_failure_inside_them_keeps_the_trend():
    from subsum.fidelity import named_cs as fidelity_named_cs

    results = Results(ROOT / "benchmarks" / "results")
    ours = fidelity_named_cs.soha_best_delay_and_hit(results)
    assert ours is not None and len(ours.point_ci95) == len(ours.points) and all(set(h) == {"soha", "best other"} for h in ours.point_ci95)
    failing = [i for i, p in enumerate(ours.points) if not rule.holds(("soha", "best other"), "lower", p)]
    assert failing and all(rule.within_intervals(("soha", "best other"), "lower", ours.points[i], ours.point_ci95[i]) for i in failing)
    assert rule.ranking_verdict(("soha", "best other"), "lower", ours.points, ours.point_ci95) == rule.SAME_TREND
    assert rule.ranking_verdict(("soha", "best other"), "lower", ours.points) == rule.DIFFERS  # without them: differs
