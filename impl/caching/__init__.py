"""Broker caches (seeds 003, 004; spec/09-caching.md): the replacement
policies (`policies`). The request/response protocol that uses them is
`subsum.impl.network.protocols.caching`."""

from subsum.impl.caching.policies import FIFO, LRU, POLICIES, CachePolicy, RateLFU, RegenerationDegradation, cache_class, make_cache

__all__ = ["FIFO", "LRU", "POLICIES", "CachePolicy", "RateLFU", "RegenerationDegradation", "cache_class", "make_cache"]
