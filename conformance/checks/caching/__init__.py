"""Checks of caching (spec/09, spec/10): `policies` (each cache policy
against its reference), `in_protocol` (the caches inside the caching
protocol), `request_response` (placement and request/response on the
simulator) and `client_server` (seed 003's examples on the reference
protocol)."""
