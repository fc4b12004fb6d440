"""Checks of the Spark pipeline (spec/07): `spark` (the shared session and
matching on Spark), `readers` (files read and written), `native_json` (the
native line check is sound), `traces` and `trace_boundaries` (the trace
check against the reference checker)."""
