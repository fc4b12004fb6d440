"""Benchmarks (`subsum bench ...`). Results go under benchmarks/; see benchmarks/README.md."""
