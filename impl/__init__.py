"""subsum.impl: the optimized implementation users run.

It never imports `subsum.model`; `subsum.conformance` checks it against the
model. `matching/`: the matching engines (spec/03-matching.md);
`summary/`: subscription summaries (spec/04-summaries.md); `network/`: the
broker network simulator with subscription forwarding, Strawman and the
optimized reconfiguration protocols (spec/05-network.md,
spec/06-reconfiguration.md); `spark/`: the Spark pipeline, batch matching
and trace checking (spec/07-pipeline.md).
"""
