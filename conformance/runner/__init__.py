"""Running the claims' checks, `subsum verify`: `verify` (which checks, each
under its budget and a watchdog), `pool` (the parent's side of `--jobs N`)
and `worker` (one worker process), `budget` and `profiles` (time budgets
and Hypothesis settings), `under_test` (the implementations the checks
run against), `census` (what the generators produce), `violations` (a
failure names its claim) and `reports` (JUnit XML and HTML)."""
