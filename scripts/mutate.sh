#!/usr/bin/env bash
# make mutate: mutation testing of impl/, model/ and conformance/ with mutmut 3 against the
# `ci` checks (tests/test_claims.py) and the unit tests of the same areas.
#
# Why mutmut (not cosmic-ray): it forks one child per mutant from a process
# that has already imported z3, Hypothesis and numpy, and runs only the tests
# that executed the mutated function (measured 0.4 to 1.6 s a mutant here,
# against about 12.5 s for cosmic-ray, which starts pytest afresh for every
# mutant); it never edits the real sources; it keeps results per function
# hash, so a rerun retests only what changed.
#
# mutmut names a mutant after its file's path, and the trampoline it plants
# matches the function's real module (`subsum.impl.matching.cindex`), so the
# code must sit at subsum/impl/...: this script stages a tree shaped like the
# installed package (build/mutation/stage) and runs mutmut there. The
# editable install's finder is appended to sys.meta_path, so the staged
# `mutants/subsum` is what the tests import.
#
# A stage-only pytest plugin bounds Hypothesis shrinking to 2 s: a killed
# mutant needs one failing example, not the smallest (shrinking was most of
# the time, up to 66 s a mutant). It does not drop the shrink phase: the ci
# profile's derandomized draws depend on the phases, and the floors on them.
#
# Variables:
#   ONLY      mutmut globs of what to mutate (default: impl, model and conformance; Spark excluded, see below)
#   JOBS      children at once (default 2)
#   SECONDS_LIMIT  stop the whole run after this many seconds (default 21600)
#   MUTANTS   only these mutant names or globs (mutmut run's arguments)
#   SAMPLE    run a seeded uniform sample of this many mutants a package instead of all of them
#             (scripts/mutation_sample.py); the estimate, with its 95% interval, goes to
#             mutation/sample.{csv,md} and mutation/sample.txt, and report.* is left alone
#   SEED      the sample's seed (default 0)
#   SAMPLE_FILE with SAMPLE: run the sample listed in this file (say, mutation/sample.txt) instead of drawing one:
#             a sample drawn after the code changed is another sample, and an earlier run's survivors are not in it
#   With SAMPLE, MUTANTS keeps only the sampled mutants its names or globs match (say, the conformance
#   package and the survivors of an earlier sample), and EARLIER names earlier runs' mutants/ folders,
#   oldest first, whose verdicts stand for the sampled mutants this run leaves out.
#
# conformance/runner/profiles.py is not mutated either: tests/conftest.py loads the profile when pytest starts, and
# mutmut's setup check (every mutated function made to raise) then fails pytest before any test (exit 4), so no
# mutant can run. Its own checks are tests/test_profiles.py.
#
# impl/spark (and the Spark checks in conformance/) is not mutated: its code builds Spark plans that run in a JVM,
# and a forked child cannot share the parent's py4j gateway (every mutant
# would start its own JVM). Its claims are checked by `subsum verify`.
#
# The report (scripts/mutation_report.py) goes to mutation/report.{csv,md};
# survivors judged equivalent are listed, one line each with the reason, in
# mutation/equivalent.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV=${VENV:-$ROOT/.venv}
SAMPLE=${SAMPLE:-}
SEED=${SEED:-0}
STAGE=${STAGE:-$ROOT/build/mutation/${SAMPLE:+sample-}stage}
ONLY=${ONLY:-"subsum/impl/* subsum/model/* subsum/conformance/*"}
JOBS=${JOBS:-2}
SECONDS_LIMIT=${SECONDS_LIMIT:-21600}

"$VENV/bin/python" -c 'import mutmut' 2>/dev/null || "$VENV/bin/python" -m pip install --quiet -e "$ROOT[dev,mutation]"

# 1. Stage the committed tree (HEAD), shaped like the wheel, keeping an earlier run's results.
mkdir -p "$STAGE"
keep=$(mktemp -d)
[ -d "$STAGE/mutants" ] && mv "$STAGE/mutants" "$keep/"
find "$STAGE" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
tree=$(mktemp -d)
git archive HEAD | tar -x -C "$tree"
git rev-parse --short HEAD > "$STAGE/commit"
cp -a "$tree/subsum" "$STAGE/subsum"
for layer in model impl conformance; do cp -a "$tree/$layer" "$STAGE/subsum/$layer"; done
for extra in tests examples spec benchmarks scripts README.md; do cp -a "$tree/$extra" "$STAGE/$extra"; done
rm -rf "$tree"
[ -d "$keep/mutants" ] && mv "$keep/mutants" "$STAGE/"
rmdir "$keep"

cat > "$STAGE/mutmut_noshrink.py" <<'PLUGIN'
"""Stage-only pytest plugin for mutation runs: the `ci` profile, shrinking cut to 2 s."""
from hypothesis.internal.conjecture import engine


def pytest_configure(config):
    # Runs after tests/conftest.py has loaded the `ci` profile. The phases stay the profile's: without
    # Phase.shrink, Hypothesis draws other examples under derandomize (measured: the informed machine's
    # TIMED:timeout-zero went from 117 to 0), and the census floors fail on the clean run.
    engine.MAX_SHRINKING_SECONDS = 2
PLUGIN

# 2. mutmut's configuration (keys of mutmut 3.8). The selection is used for the
#    coverage run; each mutant then runs the tests that executed its function.
"$VENV/bin/python" - "$STAGE" "$ONLY" "$ROOT/pyproject.toml" <<'PY'
import json, sys, tomllib
stage, only, project = sys.argv[1:]
markers = tomllib.load(open(project, "rb"))["tool"]["pytest"]["ini_options"]["markers"]  # --strict-markers needs them
tests = ["tests/test_claims.py", "tests/test_engines.py", "tests/test_arrays.py", "tests/test_engine_details.py", "tests/test_workload.py", "tests/test_summary_cli.py", "tests/test_hostile.py", "tests/test_bad_input.py", "tests/test_exit_codes.py", "tests/test_gate.py", "tests/test_caching.py", "tests/test_cache_replay.py",
         "tests/test_caching_protocol.py", "tests/test_client_server.py", "tests/test_network.py", "tests/test_siena.py",
         "tests/test_summary_routing.py", "tests/test_proofs.py",
         # the simulator's pinned runs, the fuzzer, the benchmarks' own tests, the kit and the plug-ins, the CLI
         "tests/test_pinned_runs.py", "tests/test_fuzz.py", "tests/test_bench_network.py", "tests/test_bench_caching.py",
         "tests/test_bench_client_server.py", "tests/test_bench_summary_routing.py", "tests/test_cli.py", "tests/test_conform.py",
         "tests/test_kit_planted.py", "tests/test_plugins.py", "tests/test_vectors.py", "tests/test_engine_agreement.py",
         "tests/test_verify_reports.py", "tests/test_summary_rounds.py", "tests/test_topology_errors.py",
         "tests/test_mutation_report.py", "tests/test_workload_defaults.py",
         # written from the sampled survivors (mutation/sample.md): the model's trace checker without Spark, the seeds'
         # worked examples as plain tests (mutmut cannot run docstrings), summary-file errors and small impl units
         "tests/test_trace_model.py", "tests/test_model_examples.py", "tests/test_summary_file_checks.py", "tests/test_impl_units.py",
         "tests/test_conformance_units.py", "tests/test_conformance_kit_units.py"]
# Not tests/test_doctests.py: mutmut's rewritten modules do not run module docstrings' examples (names undefined).
# Not the static checks (house rules, layers, the registry's generated files: gen_claims.py refuses a stage that is not the
# checkout), the wheel build, the README walk-through or the Spark cluster.
# Not the DuckDB kit run either: its external engine has a 10 s answer limit, which `subsum conform` under mutmut's
# stats tracing (impl/matching mutated) missed, failing the stats step (the kit's own checks run in test_kit_planted).
# -k matches names case-insensitively: "not TRACE" dropped tests/test_trace_model.py too, so name the claims exactly.
select = tests + ["-m", "not thorough", "-k", "not spark and not CLM-PIPE and not CLM-TRACE and not duckdb_engine_agrees"]
open(f"{stage}/pyproject.toml", "w").write(f"""[tool.mutmut]
source_paths = ["subsum"]
only_mutate = {json.dumps(only.split())}
do_not_mutate = ["subsum/impl/spark/*", "subsum/conformance/spark*", "subsum/conformance/native_json.py", "subsum/conformance/profiles.py"]
also_copy = ["examples", "spec", "benchmarks", "scripts", "README.md", "mutmut_noshrink.py"]
pytest_add_cli_args_test_selection = {json.dumps(select)}
pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "mutmut_noshrink"]
timeout_multiplier = 15.0
timeout_constant = 1.0
use_git_change_detection = false

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-ra --strict-markers"
markers = {json.dumps(markers)}
""")
PY

# 3. Run, bounded in time; a cut run keeps what it finished (mutmut resumes it next time).
cd "$STAGE"
export HYPOTHESIS_PROFILE=ci
start=$(date +%s)
if [ -n "$SAMPLE" ]; then
  if [ -n "${SAMPLE_FILE:-}" ]; then
    cp "$ROOT/$SAMPLE_FILE" sample.txt  # the sample drawn before: code changed since would draw another one
  else
    "$VENV/bin/python" scripts/mutation_sample.py --generate --jobs "$JOBS" --size "$SAMPLE" --seed "$SEED" --out sample.txt
  fi
  if [ -n "${MUTANTS:-}" ]; then
    mapfile -t chosen < <("$VENV/bin/python" -c 'import fnmatch, sys
globs = sys.argv[1].split()
print("\n".join(n for n in open("sample.txt").read().split() if any(fnmatch.fnmatchcase(n, g) for g in globs)))' "$MUTANTS")
    if [ ${#chosen[@]} -eq 0 ]; then echo "error: MUTANTS matches no sampled mutant: $MUTANTS" >&2; exit 2; fi
  else
    mapfile -t chosen < sample.txt
  fi
else
  # shellcheck disable=SC2206
  chosen=(${MUTANTS:-})
fi
set +e
timeout "$SECONDS_LIMIT" "$VENV/bin/mutmut" run --max-children "$JOBS" "${chosen[@]}" > mutmut-run.log 2>&1
rc=$?
set -e
echo "mutmut run: exit $rc after $(( $(date +%s) - start )) s (log: $STAGE/mutmut-run.log)"

# 4. The report, with the equivalent mutants set apart.
cd "$ROOT"
note="commit $(cat "$STAGE/commit"), ONLY=$ONLY, mutmut exit $rc after $(( $(date +%s) - start )) s with $JOBS children"
if [ -n "$SAMPLE" ]; then
  cp "$STAGE/sample.txt" mutation/sample.txt
  # shellcheck disable=SC2086
  "$VENV/bin/python" scripts/mutation_report.py ${EARLIER:-} "$STAGE/mutants" --equivalent mutation/equivalent.txt --out-dir mutation \
    --sample mutation/sample.txt --note "$note, a sample of $SAMPLE mutants a package, seed $SEED${MUTANTS:+, this run: the sampled ${#chosen[@]} of MUTANTS}${EARLIER:+, earlier verdicts from $EARLIER}"
else
  "$VENV/bin/python" scripts/mutation_report.py "$STAGE/mutants" --equivalent mutation/equivalent.txt --out-dir mutation \
    --previous mutation/report.csv --note "$note"
fi
