"""benchmarks/compiled_phases.py: it writes its three files, its parts add up
to the whole match, and bad arguments exit 2."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "compiled_phases.py"
spec = importlib.util.spec_from_file_location("compiled_phases", PATH)
phases = importlib.util.module_from_spec(spec)
spec.loader.exec_module(phases)


def test_the_parts_add_up_to_the_compiled_match(tmp_path):
    assert phases.main(["--seeds", "2", "--repeat", "1", "--out-dir", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "compiled-phases.json").read_text())["parts"]
    parts = sum(summary[p]["mean_ms"] for p in phases.PARTS)
    assert parts == pytest.approx(summary["compiled"]["mean_ms"], abs=1e-3)  # rest is the whole less the other parts
    assert summary["kernel"]["mean_ms"] > 0 and summary["vectorized"]["mean_ms"] > 0
    rows = (tmp_path / "compiled-phases.csv").read_text().splitlines()
    assert rows[0] == "seed,part,ms" and len(rows) == 1 + 2 * (len(phases.PARTS) + 2)
    assert (tmp_path / "compiled-phases.png").stat().st_size > 0


@pytest.mark.parametrize("argv", [["--seeds", "1"], ["--repeat", "0"], ["--planted-rate", "2"], ["--seeds", "x"]])
def test_bad_arguments_exit_2(argv, tmp_path):
    with pytest.raises(SystemExit) as caught:
        phases.main([*argv, "--out-dir", str(tmp_path)])
    assert caught.value.code == 2
    assert not list(tmp_path.iterdir())
