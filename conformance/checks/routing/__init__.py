"""Checks of routing across brokers (spec/08): `routes` (the model's plan
and routes against the implementation's decisions), `churn` (the summaries
protocol under churn) and `siena` (Siena's covering forwarding)."""
