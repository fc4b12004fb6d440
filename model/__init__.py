"""subsum.model: the executable reference model.

Constructed for ease of understanding rather than for optimization; the
optimized versions live in `subsum.impl`. Every function cites the spec ID it
implements (see spec/). The value types come from `subsum.core.types`.
"""

from subsum.core.types import Attribute, Constraint, Event, Subscription
from subsum.model.covering import (
    constraint_is_satisfiable,
    constraints_equal,
    covering_counterexample,
    covers_by_rules,
    covers_constraint,
    covers_subscription,
)
from subsum.model.semantics import counting_match, matches, matching_ids, operator_holds, satisfies

__all__ = [
    "Attribute", "Constraint", "Event", "Subscription",
    "constraint_is_satisfiable", "constraints_equal", "covering_counterexample",
    "covers_by_rules", "covers_constraint", "covers_subscription",
    "counting_match", "matches", "matching_ids", "operator_holds", "satisfies",
]
