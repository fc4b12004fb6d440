"""`subsum explore`: every interleaving of a small scope, checked
(spec/12-exploration.md). `scope` says what a scope holds, `state` what a
state is (its moves and its fingerprint), `search` walks the states
breadth first."""
