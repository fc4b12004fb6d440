"""The schedule engine (spec/05 DEF-NET-8, spec/12): `runs` (a schedule
drawn, run on the simulator and checked), `families` (how each protocol
family builds its network and what it checks), `declared` (every check a
run makes, as a claim), `fuzz` (`subsum fuzz reconfig`), `fuzz_cluster`
(the same on a Spark cluster) and `shrinking` (delta debugging of a
violating schedule)."""
