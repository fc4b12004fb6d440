"""Checks of the broker network (spec/05, spec/06): `forwarding` (the
checks every simulator run shares: the overlay, routing state, deliveries),
`checked_brokers` (brokers that run the model's step beside their own),
`reconfig` (the optimized protocols under churn) and `reconfig_scenarios`
(isolated swaps and fixed cases)."""
