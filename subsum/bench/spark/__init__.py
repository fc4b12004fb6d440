"""`subsum bench spark` (spec/07-pipeline.md): `bench` runs Spark's two
plans beside the compiled engine, the vectorized engine and DuckDB;
`workload` generates and writes the inputs; `measure` measures one run;
`eventlog` reads Spark's event logs (stages.csv)."""
