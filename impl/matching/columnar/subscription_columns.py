"""Subscriptions as columns: the bulk input of the vectorized and compiled
engines (`pivot_engine.PivotEngine.from_columns`), as `ColumnarBatch` is their
events' form.

Per type, four aligned arrays, one entry per constraint: the index of its
subscription (into `ids`), the code of its name (into `names`), its
operator's code (`ops.OP_CODE`) and its value (int64, float64, bool, or for
strings a code into `strings`; 0 for `any`). A generator or a reader fills
them without building a Python object per constraint; a constraint listed
twice in one subscription counts once, as in a `Subscription`'s set.

    >>> from subsum.core.types import Constraint, Subscription
    >>> cols = SubscriptionColumns.from_subscriptions([("s1", Subscription([Constraint("x", "int", "<", 5)]))])
    >>> cols.columns["int"].value.tolist(), cols.to_subscriptions()[0][1] == Subscription([Constraint("x", "int", "<", 5)])
    ([5], True)
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, cast

import attrs
import numpy as np

from subsum.core.types import OPS_BY_TYPE, TYPES, Constraint, Subscription, check_name, check_value
from subsum.impl.matching.base import constraint_keys
from subsum.impl.matching.columnar.batch import DTYPES
from subsum.impl.matching.ops import ANY, OP_CODE, OP_NAME, ConstraintKey


@attrs.define
class ConstraintColumn:
    sub: np.ndarray  # int64: subscription index of each constraint
    name: np.ndarray  # int64: code into SubscriptionColumns.names
    op: np.ndarray  # int64: ops.OP_CODE
    value: np.ndarray  # per columnar.DTYPES; strings are codes into SubscriptionColumns.strings; 0 for `any`

    def __len__(self) -> int:
        return len(self.sub)


def empty_constraint_column(type_: str) -> ConstraintColumn:
    return ConstraintColumn(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, DTYPES[type_]))


@attrs.define
class SubscriptionColumns:
    ids: list[str]
    names: list[str]
    strings: list[str]
    columns: dict[str, ConstraintColumn]

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def n_constraints(self) -> int:
        return sum(len(c) for c in self.columns.values())

    @classmethod
    def from_subscriptions(cls, pairs: Iterable[tuple[str, Subscription]]) -> "SubscriptionColumns":
        pairs = list(pairs)
        names, strings, columns = keyed_columns({i: constraint_keys(s) for i, (_, s) in enumerate(pairs)})
        return cls([sid for sid, _ in pairs], names, strings, columns)

    def keys(self) -> list[list[ConstraintKey]]:
        """Each subscription's constraints as (type, name, op, value) keys, in index order."""
        per_sub: list[list[ConstraintKey]] = [[] for _ in self.ids]
        for t, col in self.columns.items():
            for s, n, o, v in zip(col.sub.tolist(), col.name.tolist(), col.op.tolist(), col.value.tolist()):
                value = None if o == ANY else self.strings[v] if t == "string" else float(v) + 0.0 if t == "float" else v
                per_sub[s].append((t, self.names[n], OP_NAME[o], value))
        return per_sub

    def to_subscriptions(self) -> list[tuple[str, Subscription]]:
        """The (id, Subscription) pairs, in index order."""
        return [(sid, Subscription([Constraint(name, t, op, value) for t, name, op, value in keys]))
                for sid, keys in zip(self.ids, self.keys())]

    def check(self) -> None:
        """Raise ValueError, naming the first problem, unless these columns
        hold valid subscriptions: every array aligned and in range, each
        operator one its type allows, no NaN, distinct IDs and strings, and
        names, strings and wildcard patterns as DEF-DATA-3 and 6 ask."""
        if not isinstance(self.columns, dict) or set(self.columns) - set(TYPES):
            raise ValueError(f"columns must map types among {', '.join(TYPES)} to ConstraintColumns")
        for field in ("ids", "names", "strings"):
            values = getattr(self, field)
            if not isinstance(values, list) or not all(type(v) is str for v in values):
                raise ValueError(f"the {field} of a SubscriptionColumns must be a list of strings")
            if len(set(values)) != len(values):
                raise ValueError(f"the {field} of a SubscriptionColumns must be distinct")
        for name in self.names:
            check_name(name)
        for text in self.strings:
            check_value("string", text)
        for t, col in self.columns.items():
            if not isinstance(col, ConstraintColumn):
                raise ValueError(f"the {t} column must be a ConstraintColumn, got {type(col).__name__}")
            _check_column(self, t, col)


def _check_column(cols: SubscriptionColumns, t: str, col: ConstraintColumn) -> None:
    """One type's column, as `SubscriptionColumns.check` asks."""
    for field in ("sub", "name", "op", "value"):
        values = getattr(col, field)
        if type(values) is not np.ndarray or values.ndim != 1:  # not a subclass either: a masked array hides entries from min()
            raise ValueError(f"the {t} column's {field} must be a one-dimensional numpy array")
        if field != "value" and not np.issubdtype(values.dtype, np.integer):
            raise ValueError(f"the {t} column's {field} codes must be integers, got {values.dtype}")
    if not len(col.sub) == len(col.name) == len(col.op) == len(col.value):
        raise ValueError(f"the {t} column's arrays differ in length")
    if col.value.dtype != DTYPES[t]:
        raise ValueError(f"the {t} column's values are {col.value.dtype}, expected {np.dtype(DTYPES[t])}")
    for field, bound in (("sub", len(cols.ids)), ("name", len(cols.names))):
        values = getattr(col, field)
        if len(values) and not (0 <= values.min() and values.max() < bound):
            raise ValueError(f"the {t} column's {field} codes must lie in [0, {bound})")
    allowed = np.array([OP_CODE[op] for op in OPS_BY_TYPE[t]], np.int64)
    wrong = ~np.isin(col.op, allowed)
    if wrong.any():
        op = int(col.op[np.argmax(wrong)])
        raise ValueError(f"the {t} column holds operator code {op} ({OP_NAME[op] if 0 <= op < len(OP_NAME) else 'unknown'}), "
                         f"which {t} does not allow; {t} allows {', '.join(OPS_BY_TYPE[t])}")
    if t == "float" and not np.isfinite(col.value).all():
        raise ValueError("the float column holds NaN or an infinity, which are not values (DEF-DATA-2)")
    if t == "string":
        valued = col.op != ANY
        if valued.any() and not (0 <= col.value[valued].min() and col.value[valued].max() < len(cols.strings)):
            raise ValueError(f"the string column's value codes must lie in [0, {len(cols.strings)})")
        for code in np.unique(col.value[col.op == OP_CODE["wildcard"]]).tolist():
            if cols.strings[code].count("*") != 1:
                raise ValueError(f"wildcard pattern {cols.strings[code]!r} must hold exactly one '*'")


def keyed_columns(keys_of_slot: Mapping[int, Iterable[ConstraintKey]]) -> tuple[list[str], list[str], dict[str, ConstraintColumn]]:
    """(names, strings, columns) of each slot's (type, name, op, value)
    constraint keys, the slot standing as the subscription index."""
    names: dict[str, int] = {}
    strings: dict[str, int] = {}
    lists: dict[str, tuple[list[int], list[int], list[int], list[Any]]] = {t: ([], [], [], []) for t in TYPES}
    for slot, keys in keys_of_slot.items():
        for t, name, op, value in keys:
            sub, names_, ops, values = lists[t]
            sub.append(slot)
            names_.append(names.setdefault(name, len(names)))
            ops.append(OP_CODE[op])
            if value is None:
                values.append(0)
            elif t == "string":
                values.append(strings.setdefault(cast(str, value), len(strings)))
            else:
                values.append(value)
    columns = {t: ConstraintColumn(np.array(s, np.int64), np.array(n, np.int64), np.array(o, np.int64), np.array(v, DTYPES[t]))
               if s else empty_constraint_column(t) for t, (s, n, o, v) in lists.items()}
    return list(names), list(strings), columns
