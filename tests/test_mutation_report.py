"""scripts/mutation_report.py: the kill rate against the 95% target, the
equivalent mutants set apart, and the rows of modules a run did not mutate
carried from the committed report."""

import csv
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "mutation_report.py"


def _run(tmp_path, *args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60, cwd=tmp_path)


def test_a_run_of_one_package_keeps_the_others_rows_and_judges_each_package(tmp_path):
    mutants = tmp_path / "mutants" / "subsum" / "impl" / "caching"
    mutants.mkdir(parents=True)
    codes = {f"subsum.impl.caching.lru.x_admit__mutmut_{k}": 1 for k in range(1, 19)}  # 18 killed
    codes |= {"subsum.impl.caching.lru.x_admit__mutmut_19": 0, "subsum.impl.caching.lru.x_admit__mutmut_20": 0}  # 2 survived
    (mutants / "lru.py.meta").write_text(json.dumps({"exit_code_by_key": codes}))
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.csv").write_text("module,total,killed,survived,equivalent,timeout,no tests,not checked,other,kill_rate\n"
                                    "subsum/impl/matching/ops.py,100,99,1,0,0,0,0,0,0.990\n"
                                    "subsum/impl/caching/lru.py,5,1,4,0,0,0,0,0,0.200\n")
    (out / "survivors.txt").write_text("subsum.impl.matching.ops.x__wildcard__mutmut_9\nsubsum.impl.caching.lru.x_admit__mutmut_99\n")
    (tmp_path / "equivalent.txt").write_text("subsum.impl.caching.lru.x_admit__mutmut_20\tsame value either way\n")
    done = _run(tmp_path, "mutants", "--equivalent", "equivalent.txt", "--out-dir", "out", "--previous", "out/report.csv")
    assert done.returncode == 0, done.stderr
    rows = {r["module"]: r for r in csv.DictReader(open(out / "report.csv", encoding="utf-8"))}
    assert rows["subsum/impl/matching/ops.py"]["killed"] == "99"  # carried: this run did not mutate it
    lru = rows["subsum/impl/caching/lru.py"]  # this run's verdicts replace the earlier row
    assert (lru["killed"], lru["survived"], lru["equivalent"], lru["kill_rate"]) == ("18", "1", "1", "0.947")
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| subsum/impl/caching | 20 | 18 | 1 | 1 |" in report and "94.7% | **not met** |" in report  # below 95%
    assert "| subsum/impl/matching | 100 | 99 | 1 |" in report and "99.0% | met |" in report
    assert "| subsum/model | not run |" in report and "not all run" not in report and "| subsum/conformance | not run |" in report  # every package is listed
    assert (out / "survivors.txt").read_text().split() == ["subsum.impl.caching.lru.x_admit__mutmut_19",
                                                           "subsum.impl.matching.ops.x__wildcard__mutmut_9"]


def test_a_package_with_mutants_not_reached_does_not_meet_the_target(tmp_path):
    mutants = tmp_path / "mutants" / "subsum" / "model"
    mutants.mkdir(parents=True)
    codes = {f"subsum.model.rules.x_covers__mutmut_{k}": 1 for k in range(1, 20)} | {"subsum.model.rules.x_covers__mutmut_20": None}
    (mutants / "rules.py.meta").write_text(json.dumps({"exit_code_by_key": codes}))
    done = _run(tmp_path, "mutants", "--out-dir", "out")
    assert done.returncode == 0, done.stderr
    assert "| subsum/model | 20 | 19 | 0 | 0 | 0 | 0 | 1 | 100.0% | **not all run** |" in (tmp_path / "out" / "report.md").read_text()


def test_an_equivalence_line_without_a_reason_is_bad_input(tmp_path):
    (tmp_path / "mutants").mkdir()
    (tmp_path / "equivalent.txt").write_text("subsum.impl.caching.lru.x_admit__mutmut_20\n")
    done = _run(tmp_path, "mutants", "--equivalent", "equivalent.txt", "--out-dir", "out")
    assert done.returncode == 2 and "equivalent.txt:1: expected NAME<TAB>reason" in done.stderr and not (tmp_path / "out").exists()


def test_an_earlier_report_with_a_bad_count_is_bad_input_naming_line_and_field(tmp_path):
    (tmp_path / "mutants").mkdir()
    (tmp_path / "old.csv").write_text("module,total,killed,survived,equivalent,timeout,no tests,not checked,other,kill_rate\n"
                                      "subsum/impl/x.py,1,1,0,0,0,0,0,0,1.000\nsubsum/impl/y.py,1,NaN,0,0,0,0,0,0,\n")
    done = _run(tmp_path, "mutants", "--out-dir", "out", "--previous", "old.csv")
    assert done.returncode == 2 and done.stderr == "error: old.csv:3: field 'killed': expected a count, got 'NaN'\n", done.stderr
    assert not (tmp_path / "out").exists()  # nothing written
