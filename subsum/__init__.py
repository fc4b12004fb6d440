"""subsum: a formally specified content-based publish/subscribe system.

Layers: `subsum.core` (value types, filter syntax, file formats),
`subsum.model` (reference model), `subsum.impl` (optimized implementation),
`subsum.conformance` (z3 proofs and Hypothesis checks tying them together).
"""

__version__ = "0.1.0"
