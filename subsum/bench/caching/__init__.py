"""`subsum bench caching` (seeds 003, 004; spec/09-caching.md): `bench`
runs the protocol on the simulator; `ops` times the caches themselves."""
