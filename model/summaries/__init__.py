"""Subscription summaries, the reference version (spec/04-summaries.md):
`abstraction` (a subscription's constraints per key as one, DEF-SUM-1..3),
`summary` (summaries, their rows and operations, DEF-SUM-4..10) and
`seed000` (seed 000's running example as values, for the examples)."""
