"""The kit for users' own implementations (spec/11-plugins.md): what checks
an engine, a broker or a cache that is not subsum's against the model.

- `processes`, `engines`: running a user's program or plug-in engine, and
  what counts as its failure (a time-out, a crash, malformed output);
- `workloads`, `matching`: `subsum conform matching`, generated workloads
  against the model, the first failure shrunk and saved as a replay;
- `broker`: `subsum conform broker`, a broker process in any language
  driven by the simulator and checked against the model's handlers;
- `vector_cases`, `vectors`: portable test vectors from the model, and
  subsum run against them (`subsum conform vectors write|check`).

Plug-ins are named and loaded by `subsum.core.plugins`; replays are
written, read and run by `subsum.conformance.replays`.
"""
