"""Every replay subsum writes, reads and runs, in one place (spec/formats.md,
"Replays"; spec/11-plugins.md DEF-PLUG-4).

A replay holds everything needed to run a failure again exactly; `subsum
replay PATH` recognises its format by its `format` field and runs it:

- `subsum-replay`: a broker schedule that violated a claim (`subsum fuzz
  reconfig`, `subsum conform broker`), run again on the simulator;
- `subsum-client-server-replay`: client-server requests on which the
  simulator and the reference differed (the check of CLM-CS-5);
- `subsum-cache-replay`: cache operations on which a cache and its
  reference differed (the state machine of CLM-CACHE-1);
- `subsum-conform-matching`: a directory holding a workload a user's
  matching engine got wrong (`subsum conform matching`);

and, beside them, a plain cache operations file (`subsum cache replay`'s
input), run against a policy and capacity given on the command line.

Modules: `documents` (the names, the folders, reading a document),
`schedule_schema` and `formats` (each format read back with every field
checked), `writing` (each written atomically into its folder) and
`running` (each run again, with what it finds now).
"""
