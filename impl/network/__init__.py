"""The broker network (seed 002, spec/05-network.md): a deterministic
discrete-event simulator (`sim`), subscription forwarding with Strawman
reconfiguration, overlay churn, and topology generators (`topology`).

It never imports `subsum.model`; `subsum.conformance.network` checks it
against the model's ideal routing state.
"""

from subsum.impl.network.sim import CLIENT_BASE, Broker, Network, NetworkError, build
from subsum.impl.network.topology import TOPOLOGIES, TopologyError, generate, read_edgelist

__all__ = ["CLIENT_BASE", "Broker", "Network", "NetworkError", "build", "TOPOLOGIES", "TopologyError", "generate", "read_edgelist"]
