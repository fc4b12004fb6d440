"""`subsum bench summary-routing` (seed 000 ch. 5, Figs 5-2 to 5-5): `bench`
runs it; `overlays` holds the CWIX backbone (`cwix-us-24.edgelist`,
package data) and the random trees; `summaries` and `events` count
propagation and routing; `siena` and `simulated` are what summaries are
compared with; `seeds` repeats over seeds; `report` and `plots` write the
tables and figures."""
