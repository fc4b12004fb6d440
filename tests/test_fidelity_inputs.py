"""`subsum fidelity` refuses what it cannot read (issue 51, point 2): an
absent, empty or truncated CSV, a column it reads that the header lacks,
nan or an infinity where it reads a number, a summary.json that is not
JSON, and an output it cannot write. Each is exit 2 with file:line and
field, before anything is written; `--allow-missing` lets absent files
through as "not measured (file absent)", never "not reproduced"."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from subsum.fidelity import report as fidelity
from subsum.fidelity import verdict as rule
from subsum.fidelity import explain as fidelity_explain
from subsum.fidelity.explain import quoted_numbers
from subsum.cli import main
from tests.test_hostile_commands import load_commands

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
#: the CSVs the committed statements read (about 1.3 MB), and one summary.json
READ = ("caching/caching.csv", "client-server/client_server.csv", "summaries/summaries.csv", "summaries/scaling.csv",
        "summary-routing/hops.csv", "summary-routing/propagation.csv", "summary-routing/routing.csv", "summary-routing/storage.csv",
        "summary-routing/simulated.csv", "summary-routing/storage_small.csv", "summary-routing/simulated_storage.csv", "summary-routing/simulated_routing.csv",
        "matching/matching.csv", "matching/over_seeds.csv", "client-server/variants.csv", "caching/summary.json")
STATEMENT = load_commands().STATEMENT  # one minimal statement file, the hostile commands' own


def fidelity_cli(*args: str):
    result = CliRunner().invoke(main, ["fidelity", *map(str, args)])
    return result.exit_code, result.output + (result.stderr or "")


def small(tmp_path: Path, csv_text: str, summary: str = '{"parameters": {"quick": false}}') -> tuple[Path, Path]:
    """A results folder holding b/r.csv (and b/summary.json), and a statements folder whose one statement reads b/r.csv's y at x = 1."""
    results, statements = tmp_path / "results", tmp_path / "statements"
    (results / "b").mkdir(parents=True)
    statements.mkdir()
    (results / "b" / "r.csv").write_text(csv_text, encoding="utf-8", newline="")
    (results / "b" / "summary.json").write_text(summary, encoding="utf-8")
    (statements / "seed999.toml").write_text(STATEMENT, encoding="utf-8")
    return results, statements


def refused(tmp_path: Path, results: Path, statements: Path, *expected: str) -> str:
    """Run fidelity on a small folder: exit 2, the message holds every expected fragment, nothing written."""
    code, output = fidelity_cli("--results", results, "--statements", statements, "--output", tmp_path / "out" / "F.md")
    assert code == 2, output
    assert "error:" in output and all(e in output for e in expected), output
    assert not (tmp_path / "out").exists()
    return output


def test_the_small_fixture_is_read_when_whole(tmp_path):
    """The fixture itself passes, so each refusal below is the fault planted in it."""
    results, statements = small(tmp_path, "x,y\r\n1,2.0\r\n2,3.0\r\n")
    code, output = fidelity_cli("--results", results, "--statements", statements, "--output", tmp_path / "out" / "F.md",
                                "--format", "json")
    assert code == 0, output
    assert json.loads(output)["statements"][0]["verdict"] == rule.MATCHES


@pytest.mark.parametrize("text, where", [
    ("x,y\n1,2.0\n2,3", "r.csv:3: field 'y': the file ends inside this field, with no newline"),  # cut mid-row, fields all there
    ("x,y\r\n1,2.0\r\n2,3", "r.csv:3: field 'y': the file ends inside this field"),  # as the benches write it (CRLF)
    ("x,y\n1,2.0\n2\n", "r.csv:3: field 'y': missing: the row has 1 fields and the header 2"),
    ("x,y\n1,2.0\n2,3,4\n", "r.csv:3: extra fields"),
    ("x,y\n1,2.0\n\n2,3\n", "r.csv:3: field 'x': missing"),  # a blank line is a row with no field
    ('x,y\n1,"2.0\n', "r.csv:2: not a CSV table"),
])
def test_a_truncated_csv_is_refused_with_its_file_line_and_field(tmp_path, text, where):
    refused(tmp_path, *small(tmp_path, text), where, "statement 999-a")


@pytest.mark.parametrize("text, said", [
    ("", "r.csv: empty file: no header line"),
    ("x,y\r\n", "r.csv:2: a header and no rows"),
    ("x,x\n1,2\n", "r.csv:1: field 'x': an empty or repeated column name"),
])
def test_an_empty_csv_or_one_without_rows_is_refused(tmp_path, text, said):
    refused(tmp_path, *small(tmp_path, text), said)


@pytest.mark.parametrize("cell", ["nan", "NaN", "inf", "-inf", "1e999", "-1e999"])
def test_nan_or_an_infinity_where_a_number_is_read_is_refused(tmp_path, cell):
    refused(tmp_path, *small(tmp_path, f"x,y\n1,{cell}\n2,3.0\n"), f"r.csv:2: field 'y': not a finite number: '{cell}'")


def test_nan_in_a_column_the_statement_selects_by_is_refused(tmp_path):
    refused(tmp_path, *small(tmp_path, "x,y\n1,2.0\nnan,3.0\n"), "r.csv:3: field 'x': not a finite number: 'nan'")


@pytest.mark.parametrize("header, field", [("x,z", "y"), ("w,y", "x")])  # the column read; the `where` key
def test_a_column_the_statement_reads_missing_from_the_header_is_refused(tmp_path, header, field):
    refused(tmp_path, *small(tmp_path, f"{header}\n1,2.0\n"), f"r.csv:1: field '{field}': no such column in the header")


@pytest.mark.parametrize("summary, said", [
    ('{"parameters": {"qu', "summary.json:1: not valid JSON"),
    ("", "summary.json:1: not valid JSON"),
    ("[1, 2]\n", "summary.json: not a JSON object"),
    ('{"parameters": 3}\n', "summary.json: field 'parameters': not a JSON object"),
])
def test_a_corrupt_summary_json_is_refused_with_its_name(tmp_path, summary, said):
    """quick() reads every */summary.json: a corrupt one is named, never a bare exit 3."""
    refused(tmp_path, *small(tmp_path, "x,y\n1,2.0\n", summary), str(tmp_path / "results" / "b" / said))


def test_results_json_refuses_an_absent_or_corrupt_summary(tmp_path):
    from subsum.fidelity import measure as fm

    results, _ = small(tmp_path, "x,y\n1,2.0\n", '{"a": ')
    with pytest.raises(fm.InputError, match="summary.json:1: not valid JSON"):
        fm.Results(results).json("b/summary.json")
    with pytest.raises(fm.FileAbsent, match="nothing.json: no such file"):
        fm.Results(results).json("b/nothing.json")


@pytest.fixture(scope="module")
def committed_copy(tmp_path_factory) -> Path:
    """The part of benchmarks/results/ the committed statements read."""
    root = tmp_path_factory.mktemp("results")
    for file in READ:
        (root / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(RESULTS / file, root / file)
    return root


def test_the_copied_results_give_the_committed_counts(committed_copy, tmp_path):
    committed = json.loads((ROOT / "benchmarks" / "fidelity.json").read_text(encoding="utf-8"))
    assert fidelity.run(committed_copy, tmp_path / "F.md")["counts"] == committed["counts"]


def test_an_empty_results_folder_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    code, output = fidelity_cli("--results", tmp_path / "empty", "--output", tmp_path / "out" / "F.md")
    assert code == 2 and "no such file; statement" in output and "--allow-missing" in output, output
    assert not (tmp_path / "out").exists()


def test_a_deleted_csv_is_refused_and_with_allow_missing_is_not_measured_never_not_reproduced(committed_copy, tmp_path):
    results = tmp_path / "results"
    shutil.copytree(committed_copy, results)
    (results / "caching" / "caching.csv").unlink()
    code, output = fidelity_cli("--results", results, "--output", tmp_path / "out" / "F.md")
    assert code == 2 and f"{results / 'caching' / 'caching.csv'}: no such file; statement" in output, output
    assert not (tmp_path / "out").exists()

    code, output = fidelity_cli("--results", results, "--output", tmp_path / "out" / "F.md", "--allow-missing", "--format", "json")
    assert code == 0, output
    document = json.loads(output)
    full = {row["id"]: row for row in json.loads((ROOT / "benchmarks" / "fidelity.json").read_text(encoding="utf-8"))["statements"]}
    absent = [row for row in document["statements"] if row["verdict"] == fidelity.FILE_ABSENT]
    assert absent and document["absent_files"] == [str(results / "caching" / "caching.csv")]
    assert document["counts"]["all"][fidelity.FILE_ABSENT] == len(absent)
    assert sum(document["counts"]["all"].values()) == len(full)
    # no statement became "not reproduced": those that are were so with every file present (they have no measure of ours)
    assert all(full[row["id"]]["verdict"] == rule.NOT_REPRODUCED for row in document["statements"] if row["verdict"] == rule.NOT_REPRODUCED)
    assert all(v["verdict"] != rule.NOT_REPRODUCED or full[row["id"]]["readings"][k]["verdict"] == rule.NOT_REPRODUCED
               for row in document["statements"] for k, v in enumerate(row["readings"]))
    table = (tmp_path / "out" / "F.md").read_text(encoding="utf-8")
    assert f"| {fidelity.FILE_ABSENT} | statements |" in table and "**FILES ABSENT.**" in table
    assert f"**{fidelity.FILE_ABSENT}**" in table


def test_allow_missing_still_refuses_a_corrupt_file(committed_copy, tmp_path):
    results = tmp_path / "results"
    shutil.copytree(committed_copy, results)
    text = (results / "caching" / "caching.csv").read_text(encoding="utf-8")
    (results / "caching" / "caching.csv").write_text(text[: len(text) // 2], encoding="utf-8", newline="")
    code, output = fidelity_cli("--results", results, "--output", tmp_path / "out" / "F.md", "--allow-missing")
    assert code == 2 and "caching.csv:" in output and "cut" in output, output  # its last line is a cut row
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("output", ["/proc/nope/F.md", "{tmp}/a-file/F.md", "{tmp}/a-file/deeper/F.md", "{tmp}/a-folder",
                                    "{tmp}/out/fidelity.json"])
def test_an_output_that_cannot_be_written_is_refused_before_any_work(tmp_path, output):
    """Checked before the results are read: the results folder here is
    empty, which would be refused too, and the error names the output."""
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "empty").mkdir()
    before = sorted(tmp_path.rglob("*"))
    path = output.format(tmp=tmp_path)
    code, said = fidelity_cli("--results", tmp_path / "empty", "--output", path)
    assert code == 2 and "error:" in said and path in said and "no such file" not in said, said
    assert sorted(tmp_path.rglob("*")) == before and not Path("/proc/nope").exists()


def test_an_output_folder_that_does_not_exist_is_made(committed_copy, tmp_path):
    fidelity.run(committed_copy, tmp_path / "new" / "deeper" / "F.md")
    assert (tmp_path / "new" / "deeper" / "F.md").is_file() and (tmp_path / "new" / "deeper" / "fidelity.json").is_file()


# --- DEF-FID-9: graded explanations, numbers read through placeholders --------------------------------------

def graded_statement(tmp_path, extra: str) -> Path:
    """A statements folder with one statement reading b/r.csv, and `extra` appended to it."""
    folder = tmp_path / "graded"
    folder.mkdir()
    (folder / "seed009.toml").write_text(
        '[[statement]]\nid = "009-1-a"\nsection = "§1"\nquote = "q"\nkind = "number"\nvalue = "2"\nnumber = 2.0\n'
        + extra + '\n[statement.measure]\nkind = "cell"\nfile = "b/r.csv"\ncolumn = "y"\nwhere = {x = 1}\n'
        '[statement.values]\nz = {kind = "cell", file = "b/r.csv", column = "y", where = {x = 2}}\n', encoding="utf-8")
    return folder


def test_an_explanation_reads_its_numbers_through_placeholders(tmp_path):
    results, _ = small(tmp_path, "x,y\n1,5\n2,7\n")
    folder = graded_statement(tmp_path, 'explain = "ours is {ours}, the other {z}"\ngrade = "E"\nevidence = "z"')
    [row] = fidelity.evaluate(fidelity.load_all(folder), fidelity.Results(results))
    assert row.verdict == "differs"
    assert fidelity.explanation(row) == "E (a measured reading: z): ours is 5, the other 7"


@pytest.mark.parametrize("extra, said", [
    ('explain = "x"\ngrade = "B"', "field 'grade'"),
    ('explain = "x"\ngrade = "E"\nevidence = "nothing"', "field 'evidence'"),
    ('explain = "see {w}"\ngrade = "D"', "placeholders ['w']"),
])
def test_a_bad_grade_or_placeholder_is_refused(tmp_path, extra, said):
    with pytest.raises(fidelity.StatementError, match=re.escape(said)):
        fidelity.load_all(graded_statement(tmp_path, extra))


def test_no_committed_explanation_quotes_a_result_by_hand():
    """Every number an explanation shows comes from the results (spec/13 DEF-FID-9)."""
    quoted = {s.id: found for s in fidelity.load_all(fidelity.FOLDER) if (found := quoted_numbers(s.explain))}
    assert quoted == {}


def test_every_shown_explanation_is_graded():
    rows = fidelity.evaluate(fidelity.load_all(fidelity.FOLDER), fidelity.Results(RESULTS))
    assert [r.statement.id for r in fidelity.explained(rows) if not r.statement.grade] == []


def test_every_shown_difference_says_whose_it_is():
    """spec/13 DEF-FID-10: every row that does not match says whose the difference is, and an asserted cause (A)
    is ours."""
    rows = fidelity.explained(fidelity.evaluate(fidelity.load_all(fidelity.FOLDER), fidelity.Results(RESULTS)))
    assert [r.statement.id for r in rows if not r.statement.difference_by] == []
    assert [r.statement.id for r in rows if r.statement.grade == "A" and r.statement.difference_by != "ours"] == []


def test_no_cause_is_asserted_and_at_most_twelve_differences_are_ours():
    """Issue 54's acceptance (spec/13 DEF-FID-9, -10): no shown explanation is graded A (every cause named has been
    run), and at most 12 rows that differ or are not reproduced differ by our modelling or scope."""
    rows = fidelity.explained(fidelity.evaluate(fidelity.load_all(fidelity.FOLDER), fidelity.Results(RESULTS)))
    assert [r.statement.id for r in rows if r.statement.grade == "A"] == []
    ours = [r.statement.id for r in rows if r.verdict in (rule.DIFFERS, rule.NOT_REPRODUCED) and r.statement.difference_by == "ours"]
    assert len(ours) <= 12, ours


def test_every_measured_evidence_measures_and_every_placeholder_renders():
    """An E row's evidence gives a value on the committed results, and no shown explanation says '(not measured)'."""
    rows = fidelity.explained(fidelity.evaluate(fidelity.load_all(fidelity.FOLDER), fidelity.Results(RESULTS)))
    for r in rows:
        if r.statement.grade == "E":
            measured = {**{label: ours for label, ours, _ in r.readings}, **dict(r.values)}
            assert measured[r.statement.evidence] is not None, f"{r.statement.id}: evidence {r.statement.evidence!r} measures nothing"
    assert [r.statement.id for r in rows if fidelity_explain.NOT_MEASURED in fidelity.explanation(r)] == []
