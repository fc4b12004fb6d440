"""DEF-SUM-11: the packed subscription ID (seed 000 §4.2.2, Fig. 4-4).

An ID is one int, c1 | c2 | c3 from the most significant bits down:
- c1, the owning broker, in ⌈log2 brokers⌉ bits;
- c2, the subscription's slot at its broker, in ⌈log2 max_subscriptions⌉ bits;
- c3, the attribute bitmap, in `attributes` (nt) bits; bit i (from the
  right, 0-based) is set iff the subscription constrains attribute i of the
  sorted schema.

A field of width 0 holds only the value 0 (one broker, or one slot).
"""

from __future__ import annotations

import attrs


def ceil_log2(n: int) -> int:
    """⌈log2 n⌉ for n >= 1: the bits needed for the values 0 .. n-1."""
    return (n - 1).bit_length()


def _positive(_instance, attribute, value) -> None:
    if type(value) is not int or value < 1:
        raise ValueError(f"{attribute.name} must be a positive integer, got {value!r}")


def _non_negative(_instance, attribute, value) -> None:
    if type(value) is not int or value < 0:
        raise ValueError(f"{attribute.name} must be a non-negative integer, got {value!r}")


@attrs.frozen
class IdLayout:
    """The widths of the three fields, from the system's sizes."""

    brokers: int = attrs.field(validator=_positive)
    max_subscriptions: int = attrs.field(validator=_positive)
    attributes: int = attrs.field(validator=_non_negative)

    @property
    def c1_bits(self) -> int:
        return ceil_log2(self.brokers)

    @property
    def c2_bits(self) -> int:
        return ceil_log2(self.max_subscriptions)

    @property
    def c3_bits(self) -> int:
        return self.attributes

    @property
    def bits(self) -> int:
        return self.c1_bits + self.c2_bits + self.c3_bits

    @property
    def id_bytes(self) -> int:
        """Bytes of one ID on the wire: ⌈bits / 8⌉, at least 1."""
        return max(1, (self.bits + 7) // 8)

    @property
    def c3_mask(self) -> int:
        return (1 << self.c3_bits) - 1

    def encode(self, c1: int, c2: int, c3: int) -> int:
        if not 0 <= c1 < self.brokers:
            raise ValueError(f"broker {c1} is outside 0 .. {self.brokers - 1}")
        if not 0 <= c2 < self.max_subscriptions:
            raise ValueError(f"subscription slot {c2} is outside 0 .. {self.max_subscriptions - 1}")
        if not 0 <= c3 <= self.c3_mask:
            raise ValueError(f"attribute bitmap {c3:#b} does not fit in {self.c3_bits} bits")
        return (c1 << (self.c2_bits + self.c3_bits)) | (c2 << self.c3_bits) | c3

    def decode(self, sid: int) -> tuple[int, int, int]:
        c3 = sid & self.c3_mask
        c2 = (sid >> self.c3_bits) & ((1 << self.c2_bits) - 1)
        c1 = sid >> (self.c2_bits + self.c3_bits)
        return c1, c2, c3

    def broker_of(self, sid: int) -> int:
        return sid >> (self.c2_bits + self.c3_bits)

    def popcount(self, sid: int) -> int:
        """The number of attributes the subscription constrains: popcount(c3)."""
        return (sid & self.c3_mask).bit_count()

    def bitmap(self, indexes) -> int:
        c3 = 0
        for i in indexes:
            if not 0 <= i < self.c3_bits:
                raise ValueError(f"attribute index {i} is outside 0 .. {self.c3_bits - 1}")
            c3 |= 1 << i
        return c3

    def to_json(self) -> dict:
        return {"brokers": self.brokers, "max_subscriptions": self.max_subscriptions, "attributes": self.attributes}
