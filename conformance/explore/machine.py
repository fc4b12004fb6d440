"""A Hypothesis state machine over a scope's model (spec/12-exploration.md
DEF-EXP-9): its one rule draws an action from those the model enables
(`Model.actions`) and makes the model's step, checked by the declared
properties. Hypothesis then searches the scope's paths its own way and
shrinks a failing one to a short list of draws, each an action of the
model: the same actions the exhaustive searches and the random walks take.
"""

from __future__ import annotations

import functools

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from subsum.conformance.explore.model import ScopeModel
from subsum.conformance.explore.scope import Scope


class ScopeMachine(RuleBasedStateMachine):
    """The model's actions as Hypothesis rules (`machine_for` makes one per scope)."""

    model: ScopeModel

    def __init__(self) -> None:
        super().__init__()
        self.state = self.model.init()
        self.schedule: list[dict] = []

    @precondition(lambda self: next(iter(self.model.actions(self.state)), None) is not None)
    @rule(data=st.data())
    def act(self, data) -> None:
        """Draw one enabled action and make its step (a broken property raises, and Hypothesis shrinks the path)."""
        action = data.draw(st.sampled_from(list(self.model.actions(self.state))), label="action")
        self.state, done, _ = self.model.step(self.state, action)
        self.schedule += done

    @precondition(lambda self: next(iter(self.model.actions(self.state)), None) is None)
    @rule()
    def ended(self) -> None:
        """The path is over (no action is enabled): Hypothesis needs a rule it may take, and this one changes nothing."""


@functools.cache
def machine_for(scope: Scope) -> type[ScopeMachine]:
    """The state machine of `scope`'s model, as a class Hypothesis runs (`run_state_machine_as_test`, or its
    `TestCase`)."""
    return type(f"ScopeMachine_{scope.protocol}", (ScopeMachine,), {"model": ScopeModel(scope)})
