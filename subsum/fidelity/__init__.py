"""The fidelity table, `subsum fidelity` (spec/13-fidelity.md): every
quantitative statement of the seeds beside what our benches measured, with a
verdict by one rule. It sits below the benches: each bench judges its own
figures by these statements and this rule.

- `statements/seed*.toml`: the statements as data (package data, read
  through `importlib.resources`, so an installed wheel has them);
- `load`: reads and checks the statement files;
- `measure`: what a statement reads from a results folder;
- `named`, `named_cs`: the measures too particular for `load`'s kinds;
- `verdict`: the one rule from a statement and a measurement to a verdict;
- `explain`: the explanation of a row that does not match;
- `report`: FIDELITY.md and fidelity.json.
"""
