"""subsum.impl: the optimized implementation users run.

It never imports `subsum.model`; `subsum.conformance` checks it against the
model. The matching engines arrive with the matching-engines issue; until then
the CLI's only engine is the reference model (`--engine model`).
"""
