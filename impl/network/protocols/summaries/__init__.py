"""Summary-based routing (seed 000 §4.3, spec/08-summary-routing.md): the
broker (`broker.SummaryBroker`, protocol "summaries"), its roles
(`ownership`, `propagation`, `routing`), their shared state (`rounds`) and
the propagation plan and next-broker rule (`plan`)."""
