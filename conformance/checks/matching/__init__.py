"""Checks of the data model, covering and matching (spec/02, spec/03):
`properties` (Hypothesis properties, and how a property runs), `examples`
(worked examples), `proofs` (z3 proofs of the covering rules), `engines`
(each engine against the model) and `engine_internals` (each engine's
alternative ways of doing one step)."""
