"""The Spark data pipeline (spec/07-pipeline.md): batch matching over large
event logs and trace conformance checking, on PySpark.

- `session`: the session factory (`local[*]` by default, `--master` /
  `SPARK_MASTER` and `--conf` for clusters) and the Java 17+ check;
  `class_archive` names the driver JVM's archive of Spark's classes and
  decides when to build one, `archive_builder` builds it.
- `io`: reading subscriptions, events and traces (JSONL or Parquet) into
  DataFrames, validated, with errors naming the file, line and field;
  `jsonl` decodes JSONL lines natively; `frames` holds the frames' columns
  and builds frames from rows the driver holds.
- `match`: the counting plan over distinct attributes (seed 001's redundant
  attributes): native column expressions only, no Python UDF on the hot path.
- `kernel`: the kernel plan, the compiled engine run on the executors through
  `mapInArrow`; `arrow` turns Arrow batches into the kernel's columns and
  its pairs back into result rows.
- `trace`: the operational correctness check of a simulator trace
  (duplicates, spurious and missed deliveries with a grace window).

Like the rest of `subsum.impl`, this package never imports `subsum.model`.
"""

#: The plans of `subsum match --engine spark --plan` (spec/07-pipeline.md DEF-PIPE-3, DEF-PIPE-4):
#: auto takes kernel when the executors can run it, else sql.
PLANS = ("sql", "kernel", "auto")
