"""Conformance: the implementation (`subsum.impl`) checked against the
model (`subsum.model`) with z3 and Hypothesis. The only layer that imports
both. Installed as `subsum.conformance`; the folder is conformance/.

- `claims/`: the claim registry, one module per spec area (what `subsum
  verify` runs, and what each claim's checks are);
- `checks/`: the checks themselves, by area: `matching`, `summaries`,
  `network`, `routing`, `caching`, `pipeline`;
- `runner/`: running the checks (`subsum verify`): budgets, profiles,
  worker processes, reports, the census of generated cases;
- `schedules/`: the schedule engine: runs of the broker simulator, the
  protocol families, the fuzzer (also on a cluster) and shrinking;
- `explore/`: `subsum explore`, the exhaustive search of small scopes;
- `replays/`: replay files, written and run again;
- `kit/`: the checks users run against their own implementations;
- `strategies`: Hypothesis strategies for the data model, shared by all.
"""
