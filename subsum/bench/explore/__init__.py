"""`subsum bench explore` and `explore-jobs` (spec/12-exploration.md):
`bench` runs `subsum explore` beside `subsum fuzz reconfig` on planted
bugs; `ladder` grows each protocol's scope within a budget; `jobs` times
one process against `--jobs 2`."""
