"""The model the checkers of `subsum explore` run on (spec/12-exploration.md
DEF-EXP-9): a scope's initial state, the actions enabled in a state, the
step an action makes, the fingerprint of a state and the properties every
step checks. The checkers (breadth first, depth first, random walks, and a
Hypothesis state machine) know a model only through these five, as a model
checker's checkers know a model (Stateright's `Model`, TLC's spec).
"""

from __future__ import annotations

from typing import Iterator, Protocol

import attrs

from subsum.conformance.schedules.declared import Property
from subsum.conformance.explore.fingerprints import Records, fingerprint
from subsum.conformance.explore.memo import LocalSteps
from subsum.conformance.explore.scope import Scope
from subsum.conformance.explore.state import Move, State, Step, moves, successor
from subsum.conformance.schedules.families import family_of


class Model(Protocol):
    """What a checker needs of a system: where it starts, what it may do, what a step does, how states are told
    apart, and what must hold."""

    def init(self) -> State: ...

    def actions(self, state: State) -> Iterator[Move]: ...

    def step(self, state: State, action: Move, memo: LocalSteps | None = None) -> tuple[State, list[dict], Step]: ...

    def fingerprint(self, state: State, records: Records | None = None) -> int: ...

    def properties(self) -> tuple[Property, ...]: ...


@attrs.frozen
class ScopeModel:
    """The model of one scope (DEF-EXP-1, 2): its network under the checked brokers, its moves, and its family's
    declared properties (DEF-EXP-8), checked by every step. A step that breaks one raises.

    >>> model = ScopeModel(Scope("strawman", 2, 1))
    >>> [move.key for move in model.actions(model.init())]
    [('subscribe', 0)]
    """

    scope: Scope

    def init(self) -> State:
        return State.initial(self.scope)

    def actions(self, state: State) -> Iterator[Move]:
        return moves(state, self.scope)

    def step(self, state: State, action: Move, memo: LocalSteps | None = None) -> tuple[State, list[dict], Step]:
        """The state after `action`, the schedule operations it made (a closing quiesce when it left the network
        quiescent) and what it touched (`state.successor`); `memo`: the search's memo of local steps."""
        return successor(state, action, memo)

    def fingerprint(self, state: State, records: Records | None = None) -> int:
        return fingerprint(state, records)

    def properties(self) -> tuple[Property, ...]:
        return family_of(self.scope.protocol).properties(self.scope.protocol)
