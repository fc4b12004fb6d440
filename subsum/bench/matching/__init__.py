"""`subsum bench matching` (seed 001 §4): `bench` runs the experiment
groups and the scaling run; `workload` is seed 001's generator; `measure`
times one engine in a child process; `files` matches file to file;
`seeds` repeats the groups over seeds; `report` draws and judges."""
