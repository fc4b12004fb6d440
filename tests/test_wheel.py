"""The wheel is complete and works on its own: built from a copy of the source
tree, installed (not editable, no dependencies fetched) into a fresh virtual
environment whose only other packages are the ones this interpreter already
has, and run from a folder outside the repository.

The build is offline when this environment has setuptools>=77 (the dev extra
installs it); otherwise pip's build isolation fetches it. About 10 s."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Source folder -> where its files land in site-packages. Written out here, not
# read from setup.py, so that a folder the packaging forgets fails this test.
LAYOUT = {"subsum": "subsum", "model": "subsum/model", "impl": "subsum/impl", "conformance": "subsum/conformance"}
PACKAGE_DATA = ["subsum/impl/spark/log4j2.properties", "subsum/conformance/statements.json",
                "subsum/bench/summary_routing/cwix-us-24.edgelist",
                *(f"subsum/fidelity/statements/seed{n}.toml" for n in ("000", "001", "003", "004"))]
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")


def source_files() -> set[str]:
    """Every .py file of the source tree and the package data, as installed paths."""
    files = set(PACKAGE_DATA)
    for folder, target in LAYOUT.items():
        for path in (ROOT / folder).rglob("*.py"):
            if "__pycache__" not in path.parts:
                files.add(f"{target}/{path.relative_to(ROOT / folder).as_posix()}")
    return files


def build_wheel(tmp_path: Path) -> Path:
    """Build from a copy, so no stale build/ of the repository leaks into the wheel."""
    src = tmp_path / "src"
    src.mkdir()
    for path in ROOT.iterdir():
        if path.is_file():
            shutil.copy2(path, src / path.name)
    for folder in LAYOUT:
        shutil.copytree(ROOT / folder, src / folder, ignore=SKIP)
    offline = _has_setuptools(77)
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(tmp_path / "dist"), str(src)]
    if offline:
        cmd.insert(4, "--no-build-isolation")
    subprocess.run(cmd, check=True, cwd=tmp_path, env=_clean_env())
    (wheel,) = (tmp_path / "dist").glob("subsum-*.whl")
    return wheel


def _has_setuptools(major: int) -> bool:
    if importlib.util.find_spec("setuptools") is None:
        return False
    import setuptools

    return int(setuptools.__version__.split(".")[0]) >= major


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def dependency_paths() -> list[str]:
    """This interpreter's site-packages folders (those a .pth file chains in too).

    A plain folder line in a .pth file only puts the folder on sys.path: the
    .pth files inside it are not run, so the editable install's finder (an
    import hook installed by a .pth file) stays out of the new environment."""
    return [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(tmp)
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "zz_dev_dependencies.pth").write_text("".join(p + "\n" for p in dependency_paths()))
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
                   check=True, cwd=tmp, env=_clean_env())
    outside = tmp / "elsewhere"
    outside.mkdir()
    return env_dir, site, outside


def run(installed, *argv: str) -> subprocess.CompletedProcess[str]:
    env_dir, _, outside = installed
    return subprocess.run([str(env_dir / "bin" / argv[0]), *argv[1:]], cwd=outside, env=_clean_env(), capture_output=True, text=True)


def test_the_wheel_holds_every_source_file_and_the_package_data(installed):
    _, site, _ = installed
    installed_files = {p.relative_to(site).as_posix() for p in (site / "subsum").rglob("*") if p.is_file()}
    missing = source_files() - installed_files
    assert not missing, f"in the source tree but not in the wheel: {sorted(missing)}"
    assert not (site / "model").exists() and not (site / "impl").exists()


def test_subsum_is_imported_from_the_wheel_not_the_repository(installed):
    _, site, _ = installed
    code = ("import sys, subsum, subsum.model, subsum.impl.spark, importlib.util as u; "
            "print(subsum.__file__); print(subsum.model.__file__); "
            "print(u.find_spec('model'), u.find_spec('impl')); "
            "print(any('Editable' in repr(f) for f in sys.meta_path))")
    result = run(installed, "python", "-c", code)
    assert result.returncode == 0, result.stderr
    subsum_file, model_file, top_level, editable = result.stdout.splitlines()
    assert Path(subsum_file).parent == site / "subsum"
    assert Path(model_file).parent == site / "subsum" / "model"
    assert top_level == "None None"
    assert editable == "False"


def test_the_installed_cli_runs_outside_the_repository(installed):
    help_ = run(installed, "subsum", "--help")
    assert help_.returncode == 0, help_.stderr
    assert "Usage: subsum" in help_.stdout and "match" in help_.stdout
    seed = ROOT / "examples" / "seed000"
    match = run(installed, "subsum", "match", "--subscriptions", str(seed / "subscriptions.jsonl"), "--events", str(seed / "events.jsonl"))
    assert match.returncode == 0, match.stderr
    assert match.stdout == '{"event": "fig-2-2", "subscriptions": ["S1"]}\n'


def test_a_bench_and_the_fidelity_table_run_from_the_wheel(installed, tmp_path):
    """The statements and the CWIX topology are package data (issue 57): outside the checkout, the installed
    `subsum bench summary-routing --quick` reads CWIX, and `subsum fidelity` judges what it wrote by the shipped
    statements (the other benches' files absent, marked so)."""
    results = tmp_path / "results"
    bench = run(installed, "subsum", "bench", "summary-routing", "--quick", "--quiet", "--out-dir", str(results))
    assert bench.returncode == 0, bench.stderr
    table = run(installed, "subsum", "fidelity", "--results", str(results), "--allow-missing", "--format", "json",
                "--output", str(tmp_path / "FIDELITY.md"))
    assert table.returncode == 0, table.stderr
    statements = json.loads(table.stdout)["statements"]
    measured = [s["id"] for s in statements if s["ours"] is not None]  # read from the files the bench wrote
    assert len(statements) > 100 and sum(i.startswith("000-5") for i in measured) >= 15, measured
