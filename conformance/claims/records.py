"""The registry's records: a `Claim` of spec/ and the `Check`s that establish
it, and the small constructors the claim families (this package's other
modules) build their checks with.

A check's name is what `subsum verify` prints: `<module>.<function>`, the
module as the check's family names it (`conformance.checks.summaries`, not the
module of the family's package that holds the function). The constructors
derive it from the function; a family whose checks live in several modules
passes its own name, so a check keeps its name when its function moves.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Callable, Mapping

import attrs

from subsum.conformance.checks.matching import properties
from subsum.conformance.checks.matching.proofs import prove_all, rules_of

KINDS = ("proof", "property", "stateful", "example", "exhaustive")

#: A check's time budget under `ci`, in seconds, unless it names its own (conformance/runner/profiles.py).
DEFAULT_BUDGET = 120.0

#: The prefix of the model's dotted paths, which every family cites.
M = "subsum.model."


@attrs.frozen
class Check:
    """One check of a claim. `floors` maps census tags (conformance/runner/census.py)
    to the least number of times the check's generators must produce them;
    `budget` is its time limit under `ci`, in seconds."""

    kind: str = attrs.field(validator=attrs.validators.in_(KINDS))
    name: str
    run: Callable[[], object]
    floors: Mapping[str, int] = attrs.field(factory=dict, eq=False)
    budget: float = DEFAULT_BUDGET


@attrs.frozen
class Claim:
    #: CLM-<AREA>-<n>, the anchor of its spec section.
    id: str
    #: Where the claim comes from: a seed's section, a seed note, or "derived (...)".
    source: str
    #: The spec file and anchor that state it.
    spec: str
    #: The model's names it is about (under subsum.model).
    model: tuple[str, ...]
    #: The implementation's names it holds of (under subsum.impl).
    impl: tuple[str, ...]
    #: What checks it; each can fail.
    checks: tuple[Check, ...]

    @property
    def statement(self) -> str:
        """The claim's statement, as its spec section words it (conformance/statements.json)."""
        try:
            return statements()[self.id]
        except KeyError:
            raise LookupError(f"{self.id} has no statement in conformance/statements.json; "
                              "state it in spec/ and run scripts/gen_claims.py") from None


@functools.cache
def statements() -> dict[str, str]:
    """Claim ID -> statement: conformance/statements.json, which
    scripts/gen_claims.py writes from spec/ (the wheel has no spec/). Read
    when first asked, so that the script can load the registry and rewrite
    the file when it is missing or broken."""
    text = resources.files("subsum.conformance").joinpath("statements.json").read_text(encoding="utf-8")
    found: dict[str, str] = json.loads(text)["statements"]
    return found


def check_name(fn, family: str | None = None) -> str:
    """`<family>.<function>`; the family is the function's module (without
    `subsum.`) unless given.

    >>> check_name(check_name)
    'conformance.claims.records.check_name'
    >>> check_name(check_name, family="conformance.checks.summaries")
    'conformance.checks.summaries.check_name'
    """
    return f"{family or fn.__module__.replace('subsum.', '')}.{fn.__name__}"


def rules_proof(prefixes: tuple[str, ...]) -> Check:
    """The z3 proof of every covering rule whose ID starts with one of `prefixes`."""
    def run() -> str:
        results = prove_all(rules_of(prefixes))
        assert results, f"no rules start with {prefixes}"
        failed = [r for r in results if r.status != "proved"]
        assert not failed, "not proved: " + "; ".join(f"{r.id} {r.status} {r.counterexample}" for r in failed)
        return f"{len(results)} proved"

    return Check("proof", f"z3: rules {', '.join(p.rstrip('-') for p in prefixes)}", run)


def property_of(fn, floors: Mapping[str, int] | None = None, family: str | None = None) -> Check:
    """A Hypothesis property (a `property_check` function) as a check."""
    return Check("property", check_name(fn, family), lambda: properties.run_property(fn), floors=floors or {})


def example_of(fn, kind: str = "example", family: str | None = None) -> Check:
    """A function that runs a fixed case (or a proof) as a check."""
    return Check(kind, check_name(fn, family), fn)
