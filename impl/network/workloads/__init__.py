"""Seeded workloads on the simulator, each with its report:

- `routing`: clients subscribe and publish, with optional link swaps, under
  any routing protocol, and the simulator's own delivery audit;
- `caching`: the churning-subscriber workload of the caching protocol (DEF-CACHE-8);
- `client_server`: seed 003's client-server driver (DEF-CS-4).
"""
