"""Translating between the two representations of a summary, and building
owners: the impl's rows as the model's (Interval or Constraint, with sets of
subscription names), so both sides compare as values."""

from __future__ import annotations

from subsum.core.types import Constraint, Event
from subsum.impl.summary import IdLayout, OwnerSummary, Summary
from subsum.model.summaries import abstraction as ref_abstraction
from subsum.model.summaries import summary as ref

# --- translating between the two representations -----------------------------


def to_model(key, n):
    """An impl normalized constraint as the model's Interval or Constraint."""
    if key[1] in ref_abstraction.NUMERIC_TYPES:
        return ref_abstraction.Interval(n[0], n[1])
    return Constraint(key[0], key[1], n[0], n[1])


def impl_rows(summary: Summary, names=None) -> dict:
    """key -> sorted [(kind, model constraint, frozenset of names)]."""
    names = summary.names if names is None else names
    return {
        key: sorted(((kind, to_model(key, c), frozenset(names[i] for i in ids)) for kind, c, ids in rows), key=repr)
        for key, rows in summary.rows().items()
    }


def model_rows(summary: ref.ReferenceSummary) -> dict:
    return {key: sorted(((r.kind, r.constraint, r.ids) for r in rows), key=repr) for key, rows in summary.rows.items() if rows}


def constraint_sets(rows: dict) -> dict:
    return {key: sorted({repr(c) for _, c, _ in key_rows}) for key, key_rows in rows.items()}


def check_same_rows(got: dict, want: dict, *where) -> None:
    """Rows (as `impl_rows` and `model_rows` give them) that must agree:
    numeric rows exactly, with their ID sets; string rows by their
    constraints (which row an ID covered by two string rows joins may
    differ). `where` leads the failure's details."""
    for key in set(got) | set(want):
        if key[1] in ref_abstraction.NUMERIC_TYPES:
            assert got.get(key) == want.get(key), (*where, key, got.get(key), want.get(key))
    assert constraint_sets(got) == constraint_sets(want), (*where, got, want)


def as_sets(rows: dict) -> dict:
    """Rows with each key's list as a set (where the order is not the point)."""
    return {key: set(key_rows) for key, key_rows in rows.items()}


def names_matched(summary: Summary, event: Event) -> set[str]:
    return {summary.names[i] for i in summary.match(event)}


# --- building owners ----------------------------------------------------------

def layout_for(subscriptions, brokers: int = 1) -> tuple[IdLayout, tuple]:
    schema = ref_abstraction.schema_of(s for _, s in subscriptions)
    return IdLayout(brokers, max(1, len(subscriptions) + 2), len(schema)), schema


def build_owner(subscriptions, broker: int = 0, brokers: int = 1, virtual: str = "none", schema=None) -> OwnerSummary:
    layout, derived = layout_for(subscriptions, brokers)
    if schema is not None:
        layout = IdLayout(brokers, max(1, len(subscriptions) + 2), len(schema))
    owner = OwnerSummary(broker, layout, schema if schema is not None else derived, virtual)
    for name, subscription in subscriptions:
        owner.add(name, subscription)
    return owner


def split_brokers(subscriptions, parts: int):
    """Owners of `parts` brokers sharing one layout, the subscriptions dealt round robin."""
    layout, schema = layout_for(subscriptions, parts)
    owners = [OwnerSummary(b, layout, schema) for b in range(parts)]
    for i, (name, subscription) in enumerate(subscriptions):
        owners[i % parts].add(name, subscription)
    return owners
