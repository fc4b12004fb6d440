"""The client-server benchmark (subsum/bench/client_server/bench.py): its outputs,
the thesis's numbers beside ours, and relations its numbers must keep.
Nothing here asserts a timing."""

import csv
import json

import pytest

from subsum.bench.client_server import bench as bcs
from subsum.fidelity.verdict import band_of, number_verdict


@pytest.fixture(scope="module")
def quick(quick_bench):
    return quick_bench("client-server", bcs.run)


def test_quick_run_writes_every_file_and_every_verdict(quick):
    _, result, messages = quick
    saved = quick.written(("client_server.csv", "series1.png", "series2.png", "summary.json"))
    assert [v["claim"] for v in saved["thesis"]] == [claim for _, claim, _, _ in bcs.THESIS]
    # every verdict is the rule's (subsum.fidelity.verdict), recomputed here from the thesis's value, its band and ours
    for v, (_, _, value, band) in zip(saved["thesis"], bcs.THESIS):
        assert v["verdict"] == number_verdict(value, band, v["ours"]) and v["band"] == list(band_of(value, band)), v
    table, engines_line = bcs.markdown_table(saved).split("\n\n")
    assert table.count("\n") == len(bcs.THESIS) + 1
    # both engines served every quick point: their times side by side, judged by the stated rule
    speed = saved["engines"]
    assert speed["pairs"] == len(saved["points"]) and speed["verdict"] == bcs.engines_verdict(speed["simulator_over_direct"], speed["ci95"])
    assert engines_line.startswith(f"Engines: over {speed['pairs']} runs served by both")
    assert any(m.startswith("[1/") for m in messages)
    assert result["disagreements"] == [] and saved["parameters"]["request_process"] == "per-message"
    assert saved["parameters"]["ss_memory"] == 0  # SS asks the requesters of the same step (spec/10)
    kinds = {(p["series"], p["varied"]) for p in saved["points"]}
    assert {("1", "corner"), ("2", "corner"), ("1-ss-ever", "brokers"), ("1-ss-ever", "lam")} <= kinds
    assert saved["points"] and all(set(p["hit"]) == {"mean", "ci95"} and p["seeds"] == 1 for p in saved["points"])


def test_rows_keep_the_policies_relations(quick):
    out, _, _ = quick
    with open(out / "client_server.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    for row in rows:
        assert 0 <= float(row["hit"]) <= 1 and float(row["overhead"]) >= 0 and float(row["delay_ci95"]) >= 0
        if row["policy"] == "server":
            assert float(row["hit"]) == 0 and float(row["overhead"]) == 0
        if row["policy"] == "sc":
            assert float(row["overhead"]) == 0
    series1 = [r for r in rows if r["series"] == "1"]
    for varied, value in {(r["varied"], r["value"]) for r in series1}:
        at = {r["policy"]: float(r["delay"]) for r in series1 if (r["varied"], r["value"]) == (varied, value)}
        assert at["sc"] <= at["server"], (varied, value, at)  # each request's SC delay is at most its tree distance


def test_mean_ci_is_students_t():
    """Five seeds: t(0.975, 4) = 2.776 standard errors, not the normal 1.96."""
    from subsum.bench.intervals import mean_ci, t_critical

    assert mean_ci([2.0]) == (2.0, 0.0)
    assert mean_ci([1.0, 2.0, 3.0, 4.0, 5.0]) == (3.0, round(2.776 * 2.5 ** 0.5 / 5 ** 0.5, 4)) == (3.0, 1.9629)
    assert mean_ci([1.0, 3.0]) == (2.0, 12.706)
    assert t_critical(30) == 2.042 and t_critical(31) == 1.96
    with pytest.raises(ValueError, match="at least 2 values"):
        t_critical(0)


@pytest.mark.parametrize("pairs, verdict", [
    ([(1.0, 1.0), (1.1, 1.0), (1.2, 1.0)], "within with confidence"),  # ratios 1.0, 1.1, 1.2
    ([(1.0, 1.0), (2.0, 1.0), (3.0, 1.5)], "within"),  # mean 1.67, the interval reaching past 2
    ([(5.0, 1.0), (4.0, 1.0), (6.0, 1.0)], "not within"),
    ([], "not measured"),
])
def test_the_engines_times_are_judged_by_the_stated_rule(pairs, verdict):
    """Issue 52: the simulator within 2x of the direct driver, run for run (bench/client_server.engines)."""
    assert bcs.engines(pairs)["verdict"] == verdict


def test_seeds_start_at_the_seed_given():
    """`--seed S` runs each point with S, S + 1, …, S + 4 (one with --quick); 1 is the default."""
    assert bcs.FULL.seeds(1) == (1, 2, 3, 4, 5) and bcs.QUICK.seeds(1) == (1,)
    assert bcs.FULL.seeds(7) == (7, 8, 9, 10, 11) and bcs.QUICK.seeds(7) == (7,)


def test_a_direct_driver_that_differs_from_the_simulator_is_a_disagreement(tmp_path, monkeypatch):
    """The bench serves its runs with the direct driver and checks it against
    the simulator's protocol: a direct driver that forgets SS's interested
    brokers is reported, not plotted."""
    from subsum.impl.network.workloads import client_server_direct as direct

    real = direct.serve
    monkeypatch.setattr(direct, "serve", lambda tree, caches, interested, policy, *rest: real(tree, caches, {}, policy, *rest))
    monkeypatch.setattr(bcs, "QUICK", bcs.Sweep({"brokers": (10,)}, {"brokers": (10,)}, 1, 200))
    result = bcs.run(tmp_path, quick=True, log=lambda _: None)
    assert result["disagreements"] and all("ss/lfu" in d for d in result["disagreements"]), result["disagreements"]


def test_a_stopped_run_resumes_from_its_store_in_task_order(tmp_path):
    """bench/output.resumable_runs: runs already in the store are not run
    again; the results come in task order; a bad store line is an input
    error naming the file and the line."""
    from subsum.bench.output import resumable_runs
    from subsum.core.errors import InputError

    calls: list[int] = []

    def square(task):
        calls.append(task["n"])
        return {"square": task["n"] ** 2}

    tasks = [{"n": n} for n in (1, 2, 3, 2)]
    store = tmp_path / "runs.jsonl"
    first = resumable_runs(square, tasks, 1, store)
    assert next(first) == {"square": 1} and next(first) == {"square": 4}
    first.close()  # stopped after two runs
    assert calls == [1, 2] and len(store.read_text().splitlines()) == 2
    assert list(resumable_runs(square, tasks, 1, store)) == [{"square": 1}, {"square": 4}, {"square": 9}, {"square": 4}]
    assert calls == [1, 2, 3]  # only the run the store lacked, once though asked for twice
    store.write_text(store.read_text() + "not json\n")  # the store holds 1, 2 and 3 now: line 4
    with pytest.raises(InputError, match=r"runs.jsonl:4: not JSON"):
        list(resumable_runs(square, tasks, 1, store))


def test_report_only_redoes_the_summary_from_the_csv(quick, tmp_path):
    """`--report-only` reads a finished run's CSV and summary.json and
    writes the same summary.json, verdicts and plots, running nothing; a
    folder without a finished run is refused."""
    import shutil

    out = tmp_path / "client-server"
    shutil.copytree(quick.out, out)
    before = json.loads((out / "summary.json").read_text())
    (out / "series1.png").unlink()
    again = json.loads(json.dumps(bcs.report_again(out)))
    written = json.loads((out / "summary.json").read_text())
    for summary in (again, written, before):
        summary.pop("files")  # they name the folder
    assert again == written == before and (out / "series1.png").is_file()
    with pytest.raises(ValueError, match="no finished client-server run"):
        bcs.report_again(tmp_path / "nothing")
    (out / "client_server.csv").write_text("series,varied\n1,brokers\n")
    with pytest.raises(ValueError, match="client_server.csv: no column value"):
        bcs.report_again(out)
    shutil.copy(quick.out / "client_server.csv", out / "client_server.csv")
    text = (out / "client_server.csv").read_text().splitlines()
    cells = text[1].split(",")
    cells[text[0].split(",").index("steps")] = "lots"
    (out / "client_server.csv").write_text("\n".join([text[0], ",".join(cells), *text[2:]]) + "\n")
    with pytest.raises(ValueError, match=r"client_server.csv:2: field 'steps' is not a number: 'lots'"):
        bcs.report_again(out)


@pytest.mark.parametrize("engines", ["x", {"pairs": "3"}, {"pairs": 3, "simulator_over_direct": None, "ci95": 1, "max": 2, "target": 2}])
def test_report_only_refuses_an_engines_field_a_run_does_not_write(quick, tmp_path, engines):
    """A summary.json whose `engines` was edited into something else is bad input (a ValueError the CLI turns into
    exit 2), never a traceback from the report; one without `engines` (a run before issue 52) reads as not measured."""
    import shutil

    out = tmp_path / "client-server"
    shutil.copytree(quick.out, out)
    summary = json.loads((out / "summary.json").read_text())
    del summary["engines"]
    (out / "summary.json").write_text(json.dumps(summary))
    assert bcs.report_again(out)["engines"]["verdict"] == "not measured"
    summary["engines"] = engines
    (out / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(ValueError, match="field 'engines' is not what a run writes"):
        bcs.report_again(out)


def test_quick_variants_write_every_variant_and_their_relations_hold(tmp_path):
    """`subsum bench client-server --variants --quick` (issue 54): variants.csv has a row for each variant's first
    two values, the hits split by where they were answered add up to the hit, and SOHA probing the client's broker
    only never sends more extra responses than probing along the path."""
    from subsum.bench.client_server import variants

    result = variants.run(tmp_path, quick=True, log=lambda _: None)
    rows = list(csv.DictReader(open(tmp_path / "variants.csv", newline="")))
    assert {r["variant"] for r in rows} == {v.name for v in variants.VARIANTS}
    assert len(rows) == len(result["rows"]) == len(variants.points(True))
    for r in rows:
        assert abs(sum(float(r[f"hit_{p}"]) for p in ("client", "path", "off")) - float(r["hit"])) <= 5e-4
    from subsum.impl.network.workloads.client_server_direct import run_client_server_direct
    narrow = [r for r in rows if r["variant"] == "soha-client"]
    assert narrow and all(float(r["overhead"]) <= run_client_server_direct(policy="soha", brokers=int(r["brokers"]), steps=int(r["steps"]),
                                                                            seed=1)["overhead"] for r in narrow)
    assert "| soha-client |" in variants.markdown_table(result)


def test_variants_resume_from_their_store_and_remove_it_when_done(tmp_path):
    """A stopped `--variants` run goes on from OUT_DIR/variants-runs.jsonl with --resume: a run the store holds is
    not run again (a planted report there shows up in its point's row), and the store is gone once the CSV is whole."""
    from subsum.bench.client_server import variants

    first = variants.points(True)[0]
    variant, value, policy, cache = first
    settings = {**bcs.DEFAULTS, **variant.fixed, variant.knob: value}
    task = dict(policy=policy, cache_policy=cache, brokers=settings["brokers"], slots=settings["slots"], lam=settings["lam"],
                mu=settings["mu"], steps=bcs.QUICK.steps, request_process="per-message", ss_memory=bcs.SS_MEMORY, **variant.options, seed=1)
    planted = {"delay": 99.0, "overhead": 0.0, "hit": 0.0, "hit_client": 0.0, "hit_path": 0.0, "hit_off": 0.0, "requests": 1}
    (tmp_path / "variants-runs.jsonl").write_text(json.dumps({"task": task, "report": planted}) + "\n")
    result = variants.run(tmp_path, quick=True, resume=True, log=lambda _: None)
    assert result["rows"][0]["delay"] == 99.0
    assert not (tmp_path / "variants-runs.jsonl").exists()
