"""Benchmarks, `subsum bench NAME` (benchmarks/README.md). One subpackage
per bench of several modules, its command in `bench.py`: `matching`,
`summaries`, `summary_routing`, `caching`, `client_server`, `explore`,
`spark`; the one-module benches `network` and `reconfig`. Shared by all:
`output` (CSV, plots, resumable runs), `intervals` (means and 95%
intervals), `peer` (DuckDB beside our engines) and `planted` (the buggy
protocols `--protocol subsum.bench.planted:NAME` names). Verdicts follow
`subsum.fidelity.verdict`. Results go to a scratch folder unless
`--out-dir benchmarks/results` refreshes the committed ones."""
