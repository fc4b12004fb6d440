"""The names the layers share, each list written once (spec/09, spec/10,
spec/11): the model, the implementation, the checks, the benchmarks and
the command line import them from here.

>>> CACHE_POLICIES
('fifo', 'regdeg', 'lfu', 'lru')
"""

from __future__ import annotations

#: DEF-CACHE-2 … 5: the cache replacement policies (FIFO, regeneration/degradation, rate-LFU, LRU).
CACHE_POLICIES = ("fifo", "regdeg", "lfu", "lru")

#: DEF-CACHE-6: which brokers store a passing publication.
PLACEMENTS = ("candidate", "leaf", "all", "single")

#: DEF-CACHE-6, leaf placement: (i) a local subscriber; (ii) and no interested broker downstream.
LEAF_READINGS = ("i", "ii")

#: DEF-CACHE-6, single placement: which one broker stores a publication (seed 004 §3.5 does not say):
#: the publisher's access broker, or the overlay's centre (least eccentricity, then least id).
SINGLE_READINGS = ("publisher", "centre")
#: how far a cache request spreads at each broker (spec/09 DEF-CACHE-7): to every neighbor whose table entry may overlap
#: its filter (seed 004 §3.3, the default), or to one of them only, the lowest id (the seed's alternative, for comparison)
REQUEST_SPREADS = ("all", "one")
#: rate-LFU's rule among equal rates (spec/09 DEF-CACHE-4): the most recently inserted goes (seed 003 §4.6, the default), or the oldest
LFU_TIES = ("newest", "oldest")

#: DEF-CS-2: the client-server request policies (Server, Server-Cache, Server-One-Hop-Away, Server-Subscription).
REQUEST_POLICIES = ("server", "sc", "soha", "ss")

#: DEF-CS-2, SOHA's probes: the off-path neighbors of every AT-path broker the request reaches before the first
#: path hit (the default), or of the client's broker only (the narrower reading of "one hop away", for comparison)
SOHA_PROBES = ("path", "client")

#: DEF-CS-3, where a hit was answered: the client's own broker, a broker further on the AT path, or one off it
HIT_PLACES = ("client", "path", "off")

#: DEF-CS-4: how many requests a step. per-message: Poisson(λ·N·M(t)), M(t) the
#: messages served so far (seed 003 §5.2: the count grows with the brokers and
#: with the messages; the default). per-broker: Poisson(λ·N) (the reading before issue 33).
REQUEST_PROCESSES = ("per-message", "per-broker")
