"""scripts/mutation_report.py: the kill rate against the 95% target, the
equivalent mutants set apart, and the rows of modules a run did not mutate
carried from the committed report."""

import csv
import json
import subprocess
import sys
from collections import Counter
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


def test_a_sample_report_estimates_each_package_with_its_interval_and_judges_by_the_stated_rule(tmp_path):
    mutants = tmp_path / "mutants" / "subsum"
    (mutants / "model").mkdir(parents=True)
    (mutants / "impl" / "caching").mkdir(parents=True)
    model = {f"subsum.model.rules.x_covers__mutmut_{k}": 1 for k in range(1, 301)}  # 300 mutants, a sample of 100 of them
    (mutants / "model" / "rules.py.meta").write_text(json.dumps({"exit_code_by_key": model}))
    caching = {f"subsum.impl.caching.lru.x_admit__mutmut_{k}": (1 if k <= 90 else 0) for k in range(1, 101)}
    caching["subsum.impl.caching.lru.x_admit__mutmut_100"] = None  # sampled, not reached
    (mutants / "impl" / "caching" / "lru.py.meta").write_text(json.dumps({"exit_code_by_key": caching}))
    (mutants / "model" / "__init__.py.meta").write_text(json.dumps({"exit_code_by_key": {"subsum.model.x_version__mutmut_1": 1}}))
    sample = [f"subsum.model.rules.x_covers__mutmut_{k}" for k in range(1, 100)] + ["subsum.model.x_version__mutmut_1"]  # one in __init__.py
    sample += [f"subsum.impl.caching.lru.x_admit__mutmut_{k}" for k in (1, 2, 91, 100)]
    (tmp_path / "sample.txt").write_text("\n".join(sample) + "\n")
    done = _run(tmp_path, "mutants", "--out-dir", "out", "--sample", "sample.txt")
    assert done.returncode == 0, done.stderr
    rows = {r["package"]: r for r in csv.DictReader(open(tmp_path / "out" / "sample.csv", encoding="utf-8"))}
    # 100 of 100 killed: Wilson's interval is [0.963, 1], its lower end above 95%
    assert (rows["subsum/model"]["mutants"], rows["subsum/model"]["sampled"], rows["subsum/model"]["low"]) == ("301", "100", "0.963")
    assert set(rows) == {"subsum/model", "subsum/impl/caching"}  # the __init__.py mutant counts for its package
    assert rows["subsum/model"]["verdict"] == "met"
    assert rows["subsum/impl/caching"]["verdict"] == "sample not all run"  # mutant 100 not reached
    report = (tmp_path / "out" / "sample.md").read_text(encoding="utf-8")
    assert "- `subsum.impl.caching.lru.x_admit__mutmut_91`" in report and "x_admit__mutmut_92" not in report  # only the sample's survivors
    assert not (tmp_path / "out" / "report.md").exists()  # the exact report is left alone


def test_a_mutant_no_selected_test_runs_counts_as_not_killed_and_is_listed_for_triage(tmp_path):
    mutants = tmp_path / "mutants" / "subsum" / "model"
    mutants.mkdir(parents=True)
    codes = {f"subsum.model.trace.x_owed__mutmut_{k}": 1 for k in range(1, 19)}  # 18 killed
    codes |= {"subsum.model.trace.x_owed__mutmut_19": 33, "subsum.model.trace.x_owed__mutmut_20": 33}  # mutmut: no tests
    (mutants / "trace.py.meta").write_text(json.dumps({"exit_code_by_key": codes}))
    (tmp_path / "equivalent.txt").write_text("subsum.model.trace.x_owed__mutmut_20\tdead branch, shown so\n")
    done = _run(tmp_path, "mutants", "--equivalent", "equivalent.txt", "--out-dir", "out")
    assert done.returncode == 0, done.stderr
    assert "| subsum/model | 20 | 18 | 0 | 1 | 0 | 1 | 0 | 94.7% | **not met** |" in (tmp_path / "out" / "report.md").read_text()
    assert (tmp_path / "out" / "survivors.txt").read_text().split() == ["subsum.model.trace.x_owed__mutmut_19"]
    (tmp_path / "sample.txt").write_text("\n".join(codes) + "\n")
    assert _run(tmp_path, "mutants", "--equivalent", "equivalent.txt", "--out-dir", "out", "--sample", "sample.txt").returncode == 0
    row = next(csv.DictReader(open(tmp_path / "out" / "sample.csv", encoding="utf-8")))
    assert (row["no tests"], row["equivalent"], row["kill_rate"]) == ("1", "1", "0.947")
    assert "- `subsum.model.trace.x_owed__mutmut_19`" in (tmp_path / "out" / "sample.md").read_text()


def test_the_sample_verdict_rule_at_its_edges():
    sys.path.insert(0, str(SCRIPT.parent))
    from mutation_report import sample_verdict, wilson_interval

    # Wilson 95% intervals, worked by hand: 99/100 -> [0.9455, 0.9982], 148/150 -> [0.9527, 0.9963]
    assert [round(x, 4) for x in wilson_interval(99, 100)] == [0.9455, 0.9982]
    assert [round(x, 4) for x in wilson_interval(148, 150)] == [0.9527, 0.9963]
    assert sample_verdict(Counter(killed=99, survived=1)) == "**undecided**"  # 99% killed, but 95% is inside the interval
    assert sample_verdict(Counter(killed=148, survived=2)) == "met"
    assert sample_verdict(Counter(killed=80, survived=20)) == "**not met**"  # upper end 0.867
    assert sample_verdict(Counter(killed=148, timeout=2)) == "met" and sample_verdict(Counter(killed=140, timeout=10)) == "**undecided**"
    assert sample_verdict(Counter(killed=3, **{"not checked": 1})) == "**sample not all run**"


SAMPLER = SCRIPT.with_name("mutation_sample.py")


def _meta(folder, module, count):
    path = folder / "mutants" / Path(*module.split(".")[:-1])
    path.mkdir(parents=True, exist_ok=True)
    names = {f"{module}.x_f__mutmut_{k}": None for k in range(1, count + 1)}
    (path / f"{module.split('.')[-1]}.py.meta").write_text(json.dumps({"exit_code_by_key": names}))


def test_the_sample_is_seeded_uniform_per_package_and_independent_of_other_packages(tmp_path):
    _meta(tmp_path, "subsum.model.rules", 50)
    _meta(tmp_path, "subsum.impl.caching.lru", 3)  # smaller than the sample: all of it

    def draw(seed):
        done = subprocess.run([sys.executable, str(SAMPLER), "--size", "10", "--seed", str(seed), "--out", "s.txt"],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return (tmp_path / "s.txt").read_text().split()

    first = draw(0)
    assert len(first) == 13 and first == sorted(first) and draw(0) == first and draw(1) != first
    assert len({name for name in first if ".model." in name}) == 10 and sum(".lru." in name for name in first) == 3
    _meta(tmp_path, "subsum.conformance.runner.census", 40)  # a new package leaves the others' samples as they were
    assert [n for n in draw(0) if ".conformance." not in n] == first


def test_a_sample_of_no_mutants_is_bad_input(tmp_path):
    done = subprocess.run([sys.executable, str(SAMPLER), "--size", "0", "--out", "s.txt"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr == "error: --size: expected a positive count, got 0\n" and not (tmp_path / "s.txt").exists()


def test_a_sample_into_a_missing_folder_is_bad_input(tmp_path):
    _meta(tmp_path, "subsum.model.rules", 5)
    done = subprocess.run([sys.executable, str(SAMPLER), "--size", "2", "--out", "nowhere/s.txt"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr == "error: --out nowhere/s.txt: no folder nowhere\n" and not (tmp_path / "nowhere").exists()
