"""`subsum bench summaries` (seed 000 §5, Table 5-2): `bench` runs it;
`workload` is Table 5-2's generator (shared with summary routing);
`measure` measures one broker's summary; `scaling` grows the
subscriptions; `report` draws and judges."""
