# subsum: the two commands a newcomer needs are `make verify` and `make test`.
# Both bootstrap .venv from python3 on first use and reinstall when
# pyproject.toml changes.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PROFILE ?= ci
# Worker processes for `make test` (pytest-xdist) and `make verify` (subsum verify --jobs): auto is one per CPU.
JOBS ?= auto

.PHONY: verify test thorough prove claims bench bench-refresh fidelity mutate check-python check-java clean help

help:
	@echo "make verify   bootstrap .venv, install, run 'subsum verify' (every claim's checks, in one worker process per CPU;"
	@echo "              JOBS=N to choose); JUnit + HTML in build/reports/"
	@echo "make test     bootstrap .venv, install, run ruff, mypy and pytest on every CPU (pytest-xdist; JOBS=N to choose); JUnit in build/reports/"
	@echo "              it leaves out the claims' checks (make verify runs them) and the slow tests (make thorough runs them)"
	@echo "make thorough the slow tests (the loopback Spark cluster, tests marked thorough), then every claim under PROFILE=thorough"
	@echo "make prove    run the z3 proofs alone"
	@echo "make claims   print the traceability matrix"
	@echo "make bench    run every benchmark: subsum bench matching, summaries, summary-routing, caching, client-server, network, reconfig, spark"
	@echo "              (about 4.5 hours on 2 cores: client-server 1.5 h and its variants 35 min, matching over five seeds 35 min, caching"
	@echo "              30 min, summary-routing 33 min, Spark 25 min, the rest 10 min; each writes CSV + PNG under bench-out/, see benchmarks/README.md)"
	@echo "              then regenerate the fidelity table (subsum fidelity) as bench-out/FIDELITY.md; QUICK=1 runs every bench with --quick"
	@echo "              (about 7 minutes; its table says at the top that it is quick)"
	@echo "make bench-refresh   the same, writing the committed results under benchmarks/results/ and benchmarks/FIDELITY.md"
	@echo "make fidelity   regenerate benchmarks/FIDELITY.md from the committed results alone (seconds)"
	@echo "make check-java   say whether a Java 17+ runtime for Spark is present"
	@echo "make mutate   mutation testing of impl/, model/ and conformance/ (mutmut; hours; ONLY=glob narrows it); report in mutation/report.md"
	@echo "PROFILE=thorough make verify   more Hypothesis examples"

check-python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found; subsum needs Python 3.11 or newer" >&2; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || { echo "error: subsum needs Python 3.11 or newer; $(PYTHON) is $$($(PYTHON) --version 2>&1)" >&2; exit 1; }

# Spark (local[*]) needs a Java 17+ runtime. The check says what is missing.
check-java:
	@sh scripts/check-java.sh

$(STAMP): pyproject.toml | check-python
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# Reports for CI systems: JUnit XML (make test, make verify) and a self-contained HTML page (make verify).
REPORTS ?= build/reports

verify: $(STAMP) check-java
	@mkdir -p $(REPORTS)
	$(BIN)/subsum verify --profile $(PROFILE) --jobs $(JOBS) --junit $(REPORTS)/verify-junit.xml --html $(REPORTS)/verify.html

# ruff and mypy first (seconds), then pytest on every CPU (minutes; it includes
# the docstring examples of subsum.model and subsum.core, tests/test_doctests.py).
# It leaves out tests/test_claims.py (the `claims` mark: `make verify` runs those
# checks) and the `thorough` tests (`make thorough`). mypy reads build/typecheck/,
# which scripts/link_tree.py makes.
test: $(STAMP)
	@mkdir -p $(REPORTS)
	@# numba compiles the compiled engine's kernels into its disk cache beside mypy (seconds each), not in every test process.
	$(BIN)/python -c 'from subsum.impl.matching.columnar.compiled import warm; warm()' & warming=$$!; \
	  $(BIN)/ruff check . && $(BIN)/python scripts/link_tree.py >/dev/null && $(BIN)/mypy; checked=$$?; \
	  wait $$warming; warmed=$$?; test $$checked -eq 0 && test $$warmed -eq 0
	$(BIN)/python -m pytest -n $(JOBS) -m "not claims and not thorough" --junitxml=$(REPORTS)/pytest-junit.xml

# The slow tests, in one process (the cluster module shares one cluster), then every claim under `thorough`.
thorough: $(STAMP) check-java
	@mkdir -p $(REPORTS)
	$(BIN)/python -m pytest -m thorough --junitxml=$(REPORTS)/pytest-thorough-junit.xml
	$(BIN)/subsum verify --profile thorough --jobs $(JOBS) --junit $(REPORTS)/verify-thorough-junit.xml --html $(REPORTS)/verify-thorough.html

prove: $(STAMP)
	$(BIN)/subsum prove

claims: $(STAMP)
	$(BIN)/subsum claims

BENCH_OUT ?= bench-out
FIDELITY_OUT ?= $(BENCH_OUT)/FIDELITY.md
# QUICK=1 runs every bench with --quick (minutes); FIDELITY.md then says its results are quick.
BENCH_FLAGS := $(if $(QUICK),--quick,)

bench: $(STAMP) check-java
	$(BIN)/subsum bench matching --over-seeds $(if $(QUICK),2,5) --out-dir $(BENCH_OUT) $(BENCH_FLAGS)
	$(BIN)/subsum bench summaries --out-dir $(BENCH_OUT) $(BENCH_FLAGS)
	$(BIN)/subsum bench summary-routing --out-dir $(BENCH_OUT) $(BENCH_FLAGS)
	$(BIN)/subsum bench caching --out-dir $(BENCH_OUT) $(BENCH_FLAGS)
	$(BIN)/subsum bench client-server --out-dir $(BENCH_OUT) $(BENCH_FLAGS)
	$(BIN)/subsum bench client-server --variants --out-dir $(BENCH_OUT) $(BENCH_FLAGS)
	$(BIN)/subsum bench network --out-dir $(BENCH_OUT) $(BENCH_FLAGS)
	$(BIN)/subsum bench reconfig --out-dir $(BENCH_OUT) $(BENCH_FLAGS)
	$(BIN)/subsum bench spark --out-dir $(BENCH_OUT) $(BENCH_FLAGS)
	$(BIN)/subsum bench explore --out-dir $(BENCH_OUT) $(BENCH_FLAGS)
	$(BIN)/subsum fidelity --results $(BENCH_OUT) --output $(FIDELITY_OUT)

bench-refresh:
	$(MAKE) bench BENCH_OUT=benchmarks/results FIDELITY_OUT=benchmarks/FIDELITY.md

# The fidelity table alone, from the committed results (seconds).
fidelity: $(STAMP)
	$(BIN)/subsum fidelity --results benchmarks/results --output benchmarks/FIDELITY.md

# Mutation testing of impl/ and model/ with mutmut against the ci checks (hours on 2 cores; the weekly job).
# ONLY="subsum/impl/matching/*" narrows it; SECONDS_LIMIT caps it; a rerun resumes. Report: mutation/report.md.
mutate: $(STAMP)
	bash scripts/mutate.sh

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .mypy_cache .ruff_cache build *.egg-info
