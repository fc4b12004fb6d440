"""The implementations that the component checks run against (spec/11-plugins.md).

By default a check marked with a subject in the claim registry
(`Check.subject`, conformance/claims.py) runs against every built-in
implementation of that subject: all five matching engines, all four cache
policies. `subsum verify --engine X` or `--cache X` runs the same checks
against the plug-in X alone (`only`). The checks read the names here when
they run, never at import time.

>>> engines()[:2]
['brute', 'compiled']
>>> with only("engine", "brute"):
...     engines()
['brute']
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import Iterator, Mapping

from hypothesis import strategies as st

from subsum.impl.caching import POLICIES
from subsum.impl.matching import ENGINES

SUBJECTS = ("engine", "cache")
#: subject -> the names chosen for it within an `only` block (a context variable: the choice is its block's).
_chosen: ContextVar[Mapping[str, tuple[str, ...]]] = ContextVar("subsum_under_test", default=MappingProxyType({}))


def engines() -> list[str]:
    """The engine names (built-in, entry point or module:attribute) under test."""
    return list(_chosen.get().get("engine", sorted(ENGINES)))


def caches() -> list[str]:
    """The cache policy names (built-in, entry point or module:attribute) under test."""
    return list(_chosen.get().get("cache", sorted(POLICIES)))


def _one_of(names) -> st.SearchStrategy[str]:
    # not st.deferred, which reads its names once and keeps them
    return st.integers(0, 255).map(lambda i: (chosen := names())[i % len(chosen)])


def engine_names() -> st.SearchStrategy[str]:
    """A strategy over `engines()`, read at every draw."""
    return _one_of(engines)


def cache_names() -> st.SearchStrategy[str]:
    """A strategy over `caches()`, read at every draw."""
    return _one_of(caches)


@contextmanager
def only(subject: str, name: str) -> Iterator[None]:
    """Within the block, the checks of `subject` run against `name` alone."""
    if subject not in SUBJECTS:
        raise ValueError(f"unknown subject {subject!r}; expected one of {SUBJECTS}")
    token = _chosen.set(MappingProxyType({**_chosen.get(), subject: (name,)}))
    try:
        yield
    finally:
        _chosen.reset(token)
