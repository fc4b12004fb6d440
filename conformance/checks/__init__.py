"""The checks behind the claims (`conformance/claims/` says which check
speaks for which claim), one subpackage per area of the spec:

- `matching`: the data model, covering and the engines (spec/02, 03);
- `summaries`: the subscription summaries (spec/04);
- `network`: forwarding and reconfiguration on the simulator (spec/05, 06);
- `routing`: summary routing and Siena's covering forwarding (spec/08);
- `caching`: the caches, the caching protocol and client-server (spec/09, 10);
- `pipeline`: the Spark pipeline and the trace check (spec/07).
"""
