"""Declared properties (spec/12-exploration.md DEF-EXP-8): every check a
schedule's run makes, written down as a claim, a sentence and when it can
change, so that a checker runs each only where it can fail and reports how
often it ran.

Three forms, as in model checkers that separate the model from its checks:
- `Always(claim, says, check, after)`: a predicate of the network, checked
  after every operation whose kind is in `after` (the operations that can
  change what it reads). The overlay changes only in overlay operations, so
  its check runs after those (and at quiescence, which also covers a
  broker that broke its own neighbor set in a plug-in's handler);
- `AtQuiescence(claim, says, check)`: checked when the network is quiescent
  (the operation `quiesce`);
- `OnStep(claim, says)`: checked inside the step it speaks of, by the code
  that runs the step (the checked brokers compare each handler run with the
  model's; a publication in a quiescent state is followed to its end). Each
  such check says so with `ran(name)`.

`tallying()` counts the runs of every property inside a block (`subsum
explore --format json` lists them).
"""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator

import attrs

#: The operations that change the overlay (spec/formats.md).
OVERLAY_CHANGES = frozenset({"swap", "break", "add", "crash", "leave", "join"})
#: Every operation of a schedule (`quiesce` runs the network to quiescence: it delivers messages too).
EVERY_OPERATION = frozenset({"subscribe", "unsubscribe", "publish", "request", "deliver", "fire", "timeout", "lose-flush",
                             "quiesce"}) | OVERLAY_CHANGES
ALWAYS, AT_QUIESCENCE, ON_STEP = "always", "at quiescence", "on step"


@attrs.frozen
class Property:
    """One declared check: its form, its name (unique in its family), the claim it speaks for, what it says, the
    check (None for one made inside the step it speaks of) and the operations after which it runs."""

    form: str
    name: str
    claim: str
    says: str
    check: Callable | None = attrs.field(default=None, eq=False)
    after: frozenset[str] = frozenset()

    def describe(self, runs: int) -> dict:
        """The property as a JSON report lists it, with how often it ran."""
        return {"name": self.name, "form": self.form, "claim": self.claim, "says": self.says, "after": sorted(self.after) or None,
                "runs": runs}


def Always(name: str, claim: str, says: str, check: Callable, after: Iterable[str] = EVERY_OPERATION) -> Property:
    """A predicate of the network that holds after every operation in `after`.

    >>> Always("x", "CLM-X", "nothing", lambda net: None, after={"swap"}).after
    frozenset({'swap'})
    """
    return Property(ALWAYS, name, claim, says, check, frozenset(after))


def AtQuiescence(name: str, claim: str, says: str, check: Callable) -> Property:
    """A predicate of the network that holds whenever it is quiescent."""
    return Property(AT_QUIESCENCE, name, claim, says, check, frozenset({"quiesce"}))


def OnStep(name: str, claim: str, says: str) -> Property:
    """A check made inside the step it speaks of (which calls `ran(name)` each time)."""
    return Property(ON_STEP, name, claim, says)


class Checks:
    """The properties of one family, arranged for a run: which `Always` ones follow each operation, and the
    `AtQuiescence` ones; each run counted in the active tallies."""

    def __init__(self, properties: tuple[Property, ...]) -> None:
        self.properties = properties
        self.after: dict[str, tuple[tuple[str, Callable], ...]] = {
            kind: tuple((p.name, p.check) for p in properties if p.form == ALWAYS and p.check and kind in p.after)
            for kind in EVERY_OPERATION}
        self.at_quiescence = tuple((p.name, p.check) for p in properties if p.form == AT_QUIESCENCE and p.check)

    def after_operation(self, kind: str, net) -> None:
        """The `Always` properties that `kind` can change, checked."""
        for name, check in self.after.get(kind, ()):
            check(net)
            if _active:
                ran(name)

    def quiescent(self, net) -> None:
        """Every `AtQuiescence` property, and the `Always` ones that run at quiescence, checked."""
        for name, check in self.at_quiescence:
            check(net)
            if _active:
                ran(name)
        self.after_operation("quiesce", net)

    def report(self, tally: Counter) -> list[dict]:
        """Every property with how often it ran (`tally`, from `tallying`)."""
        return [p.describe(tally[p.name]) for p in self.properties]


_active: list[Counter] = []


@contextmanager
def tallying() -> Iterator[Counter]:
    """Count every property's runs inside the block, by name."""
    counts: Counter = Counter()
    _active.append(counts)
    try:
        yield counts
    finally:
        _active.remove(counts)


def current_tally() -> Counter:
    """The innermost `tallying` block's counts (an empty Counter outside any)."""
    return _active[-1] if _active else Counter()


def ran(name: str) -> None:
    """The property `name` was checked once (what a check inside a step calls)."""
    for counts in _active:
        counts[name] += 1
