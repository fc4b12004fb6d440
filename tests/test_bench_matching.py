"""`subsum bench matching`'s default-point parts that a quick test can
afford: the file-to-file processes (matching_files) on a small workload,
checked against the reference model's lines, and the default-point table
(matching_report.point_table) on rows written by hand."""

import json

from subsum.bench.matching.files import file_to_file, files_disagree, write_workload
from subsum.bench.matching.report import point_table
from subsum.core.jsonio import match_result_lines
from subsum.bench.matching.workload import Params, generate
from subsum.model.semantics import match_batch


def test_file_to_file_processes_write_the_models_lines(tmp_path):
    workload = generate(Params(events=40, subscriptions=30, names=20, attrs_low=3, attrs_high=6, cons_low=1, cons_high=3,
                               planted_rate=0.5, seed=4))
    subs, events = write_workload(workload, tmp_path)
    matched = match_batch(workload.subscriptions, workload.events())
    want = "".join(line + "\n" for line in match_result_lines((f"e{i}", sorted(ids)) for i, ids in enumerate(matched)))
    assert sum(map(len, matched)) >= 20  # planted events do match
    rows = [file_to_file(engine, subs, events, tmp_path) for engine in ("compiled", "duckdb")]
    for row in rows:
        assert "error" not in row, row
        assert (tmp_path / f"{row['engine']}.out.jsonl").read_text() == want
        phases = [row[k] for k in ("read_s", "build_s", "match_s", "write_s")]
        assert all(p >= 0 for p in phases) and row["start_s"] > 0
        assert abs(row["wall_s"] - sum(phases) - row["start_s"]) < 1e-3
    assert files_disagree(rows) is None
    json.loads((tmp_path / "duckdb.timings.json").read_text())  # the DuckDB process wrote its phases


def test_files_disagree_names_the_processes():
    rows = [{"engine": "compiled", "digest": "aa"}, {"engine": "duckdb", "digest": "bb"}]
    assert files_disagree(rows) == "file to file at the default point: {'compiled': 'aa', 'duckdb': 'bb'}"
    assert files_disagree([{"engine": "compiled", "digest": "aa"}, {"engine": "duckdb", "error": "exit 3: boom"}])
    assert files_disagree([{"engine": "compiled", "digest": "aa"}, {"engine": "duckdb", "digest": "aa"}]) is None


def test_point_table_joins_the_in_process_rows_and_the_file_rows():
    rows = [
        {"group": "default", "engine": "compiled", "repeat": 3, "match_s_mean": "0.0015", "match_s_min": "0.0014",
         "first_call_s": "0.2", "build_s": 0.25, "matches": 305},
        {"group": "default", "engine": "model", "repeat": 1, "match_s_mean": "0.3", "match_s_min": "0.3",
         "first_call_s": "0.3", "build_s": 0.0, "matches": 20},
        {"group": 5, "engine": "compiled", "repeat": 3, "match_s_mean": "0.01", "match_s_min": "0.01",
         "first_call_s": "0.01", "build_s": 0.1, "matches": 1},
    ]
    files = [{"engine": "compiled", "wall_s": 1.3, "start_s": 0.8, "read_s": 0.2, "build_s": 0.25, "match_s": 0.04,
              "write_s": 0.01}, {"engine": "compiled-cold", "wall_s": 9.0}]
    assert point_table(rows, files) == [{
        "engine": "compiled", "steady_ms_mean": 1.5, "steady_ms_min": 1.4, "first_call_ms": 200.0, "build_s": 0.25,
        "matches": 305, "file_to_file_s": 1.3, "file_start_s": 0.8, "file_read_s": 0.2, "file_build_s": 0.25,
        "file_match_s": 0.04, "file_write_s": 0.01, "file_to_file_s_cold": 9.0}]


def test_the_million_target_follows_its_rule():
    """S = E = 10^6: build + match under 60 s, peak under 8 GiB, and the cross-check on its first events
    agreeing, read from the scaling row."""
    from subsum.bench.matching.report import assess_targets

    def row(match_s, build_s, peak, agrees=True):
        return {"group": "scaling", "x": "1000000x1000000", "engine": "compiled", "repeat": 1, "agrees": agrees,
                "match_s_mean": str(match_s), "build_s": build_s, "peak_rss_mib": str(peak), "start_rss_mib": "2000"}

    [slow] = assess_targets([row(384.5, 88.3, 7183)])
    assert slow["claim"].startswith("target: S=1,000,000") and slow["holds"] is False
    assert slow["detail"] == ("compiled: build 88.3 s + match 384.5 s, peak 7183 MiB, of which 2000 MiB inherited from the parent "
                              "(the workload); agrees with vectorized on the first events")
    assert assess_targets([row(40.0, 19.0, 8000)])[0]["holds"] is True
    assert assess_targets([row(40.0, 19.0, 8200)])[0]["holds"] is False  # memory alone fails it
    assert assess_targets([row(40.0, 19.0, 8000, agrees=False)])[0]["holds"] is False  # so does a failed cross-check
    assert assess_targets([]) == []
