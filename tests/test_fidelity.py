"""benchmarks/FIDELITY.md (issue 33): the verdict rule, the statement
files, and the committed table as the generator writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from subsum.bench import fidelity_load
from subsum.bench import verdict as rule
from subsum.bench.fidelity_measure import Ours, Results

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("value, band, ours, expected", [
    (6.0, None, 6.9, rule.MATCHES), (6.0, None, 6.91, rule.DIFFERS), (6.0, None, 5.1, rule.MATCHES), (6.0, None, 5.09, rule.DIFFERS),
    (4.0, (4.0, 8.0), 7.9, rule.MATCHES), (4.0, (4.0, 8.0), 8.1, rule.DIFFERS), (0.0, (0.0, 0.05), 0.04, rule.MATCHES),
    (0.0, None, 0.0, rule.MATCHES), (0.0, None, 0.01, rule.DIFFERS), (1.0, None, None, rule.NOT_REPRODUCED),
])
def test_a_number_matches_within_its_stated_range_or_fifteen_percent(value, band, ours, expected):
    assert rule.number_verdict(value, band, ours) == expected


def test_a_number_off_its_band_keeps_the_same_trend_only_if_it_moves_the_stated_way():
    up = [(5, 1.0), (25, 8.0), (50, 24.0)]
    assert rule.number_verdict(9.0, None, 24.0, stated_direction="up", our_series=up) == rule.SAME_TREND
    assert rule.number_verdict(9.0, None, 24.0, stated_direction="down", our_series=up) == rule.DIFFERS
    assert rule.number_verdict(9.0, None, 24.0, our_series=up) == rule.DIFFERS  # the seed states no direction


@pytest.mark.parametrize("direction, series, expected", [
    ("up", [(1, 1.0), (2, 2.0), (3, 3.0)], rule.MATCHES), ("up", [(1, 1.0), (2, 0.9), (3, 3.0)], rule.SAME_TREND),
    ("up", [(1, 3.0), (2, 2.0), (3, 1.0)], rule.DIFFERS), ("down", [(3, 1.0), (1, 3.0), (2, 2.0)], rule.MATCHES),
    ("flat", [(1, 1.0), (2, 1.1), (3, 0.95)], rule.MATCHES), ("flat", [(1, 1.0), (2, 2.0)], rule.DIFFERS),
    ("up", [(1, 1.0)], rule.NOT_REPRODUCED), ("up", None, rule.NOT_REPRODUCED),
])
def test_a_trend_matches_step_by_step_and_keeps_its_direction_end_to_end(direction, series, expected):
    assert rule.trend_verdict(direction, series) == expected


def test_a_ranking_matches_everywhere_keeps_the_trend_at_most_points_and_is_strict():
    order, good, bad = ["soha", "sc", "server"], {"soha": 1.0, "sc": 2.0, "server": 3.0}, {"soha": 2.0, "sc": 1.0, "server": 3.0}
    assert rule.ranking_verdict(order, "lower", [good, good]) == rule.MATCHES
    assert rule.ranking_verdict(order, "lower", [good, good, bad]) == rule.SAME_TREND
    assert rule.ranking_verdict(order, "lower", [good, bad]) == rule.DIFFERS  # half is not more than half
    assert rule.ranking_verdict(order, "higher", [good]) == rule.DIFFERS
    assert rule.ranking_verdict(order, "lower", [{"soha": 1.0, "sc": 1.0, "server": 3.0}]) == rule.DIFFERS  # a tie is no order
    assert rule.ranking_verdict(order, "lower", []) == rule.NOT_REPRODUCED
    with pytest.raises(ValueError, match="lower or higher"):
        rule.ranking_verdict(order, "smaller", [good])


def test_measures_read_the_rows_they_name(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "r.csv").write_text("x,policy,y,y_ci95\n1,a,1.0,0.1\n2,a,2.0,0.2\n1,b,3.0,0.1\n2,b,1.0,0.1\n")
    results = Results(tmp_path)
    from subsum.bench import fidelity_measure as fm

    assert fm.cell("b/r.csv", "y", x=2, policy="a")(results) == Ours(mean=2.0, ci95=0.2, where="x = 2, policy = a")
    assert fm.extreme("b/r.csv", "y")(results).mean == 3.0
    assert fm.along("b/r.csv", "y", "x", policy="a")(results).series == ((1.0, 1.0), (2.0, 2.0))
    assert fm.ranked("b/r.csv", "y", "policy", ("a", "b"), "x")(results).points == ({"a": 1.0, "b": 3.0}, {"a": 2.0, "b": 1.0})
    assert fm.derived(lambda a, b: a - b, "gap", fm.cell("b/r.csv", "y", x=1, policy="b"), fm.cell("b/r.csv", "y", x=1, policy="a"))(results).mean == 2.0
    assert fm.cell("b/r.csv", "y", x=9)(results) is None and fm.cell("missing.csv", "y")(results) is None


def test_a_statement_file_that_breaks_the_schema_is_refused_with_its_name(tmp_path):
    bad = tmp_path / "seed999.toml"
    bad.write_text('[[statement]]\nid = "999-a"\nsection = "§1"\nquote = "q"\nkind = "ranking"\nvalue = "v"\norder = ["a"]\n'
                   'better = "lower"\n[statement.measure]\nkind = "none"\n')
    with pytest.raises(fidelity_load.StatementError, match=r"seed999.toml: statement 1 \(999-a\).*order of two"):
        fidelity_load.load(bad)
    bad.write_text('[[statement]]\nid = "999-a"\nsection = "§1"\nquote = "q"\nkind = "number"\nvalue = "v"\nnumber = 1\n'
                   '[statement.measure]\nkind = "cell"\nfile = "f.csv"\n')
    with pytest.raises(fidelity_load.StatementError, match="lacks 'column'"):
        fidelity_load.load(bad)
    bad.write_text('[[statement]\n')
    with pytest.raises(fidelity_load.StatementError, match="seed999.toml"):
        fidelity_load.load(bad)
