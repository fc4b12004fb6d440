"""`subsum bench client-server` (seed 003 §5; spec/10-client-server.md):
`bench` runs it; `variants` runs the causes its differing rows name."""
