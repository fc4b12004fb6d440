"""Plug-ins: a user's own matching engine, broker protocol or cache, named
wherever a command takes one of subsum's (spec/11-plugins.md, DEF-PLUG-1).

A component is named in one of three ways, tried in this order:

1. a built-in name: `vectorized`, `strawman`, `lru`, ...;
2. the name of an entry point in the kind's group (`subsum.engines`,
   `subsum.protocols`, `subsum.caches`), declared by an installed package;
3. `module:attribute`, for example `mypkg.proto:MyBroker`. The module is
   imported with the current directory first on `sys.path`, so a plug-in
   next to the user's files needs no installing.

What is loaded must be a class that passes the kind's check (the caller
gives it: an engine has `add`, `remove` and `match_batch`, a broker
subclasses `Broker`, ...). Every failure to load is a `PluginError`:
one line, exit 2, naming the plug-in and what is wrong.

>>> resolve("engine", "brute", {"brute": dict})
<class 'dict'>
>>> looks_like_path("mypkg.proto:MyBroker")
True
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import os
import sys
from typing import Callable, Iterator, Mapping

from subsum.core.errors import EngineError, SubsumError

#: kind -> the entry-point group where installed packages declare their plug-ins
GROUPS = {"engine": "subsum.engines", "protocol": "subsum.protocols", "cache": "subsum.caches"}


class PluginError(SubsumError, ValueError):
    """A plug-in that cannot be found, imported or used (exit 2)."""


class PluginFailure(EngineError):
    """A plug-in raised while it ran (`running`). Where subsum runs it for a
    user (`subsum match`, `subsum cache replay`) that is an engine failure,
    exit 3; a check that runs it reports it as the plug-in's failure."""

    def __init__(self, kind: str, name: str, exc: BaseException) -> None:
        self.kind, self.name = kind, name
        self.cause = f"{type(exc).__name__}: {exc}"
        super().__init__(f"{kind} {name} failed: {self.cause}")


@contextlib.contextmanager
def running(kind: str, name: str) -> Iterator[None]:
    """The frame of a plug-in's code: whatever it raises, but subsum's own
    errors, comes out as one `PluginFailure` naming it (spec/11 DEF-PLUG-2).

    >>> try:
    ...     with running("engine", "mine:Engine"):
    ...         raise KeyError("x")
    ... except PluginFailure as exc:
    ...     str(exc)
    "engine mine:Engine failed: KeyError: 'x'"
    """
    try:
        yield
    except SubsumError:
        raise
    except Exception as exc:
        raise PluginFailure(kind, name, exc) from exc


def looks_like_path(name: str) -> bool:
    """Whether `name` is a `module:attribute` reference."""
    module, sep, attribute = name.partition(":")
    return bool(sep and module and attribute)


def entry_points(kind: str) -> dict[str, importlib.metadata.EntryPoint]:
    """The installed plug-ins of `kind`, by entry-point name."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=GROUPS[kind])}


def import_attribute(reference: str) -> object:
    """`module:attribute` (the attribute may be dotted), imported with the
    current directory first on sys.path."""
    module_name, _, attribute = reference.partition(":")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise PluginError(f"{reference}: no module named {exc.name!r} (looked in the current directory "
                              f"and on sys.path; set PYTHONPATH or install the package)") from None
        raise PluginError(f"{reference}: importing {module_name} failed: {type(exc).__name__}: {exc}") from None
    except (Exception, SystemExit) as exc:  # the user's module failed, or exited, while importing
        raise PluginError(f"{reference}: importing {module_name} failed: {type(exc).__name__}: {exc}") from None
    value: object = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise PluginError(f"{reference}: module {module_name} has no attribute {attribute!r}") from None
    return value


def resolve(kind: str, name: str, builtins: Mapping[str, type], check: Callable[[type], str | None] = lambda cls: None) -> type:
    """The class `name` stands for: a built-in, an installed entry point, or
    `module:attribute`. `check(cls)` returns what is wrong with a loaded
    class, or None."""
    if name in builtins:
        return builtins[name]
    installed = entry_points(kind)
    if name in installed:
        try:
            value = installed[name].load()
        except (Exception, SystemExit) as exc:
            raise PluginError(f"{kind} {name!r} (entry point {installed[name].value}): loading failed: "
                              f"{type(exc).__name__}: {exc}") from None
    elif looks_like_path(name):
        value = import_attribute(name)
    else:
        known = ", ".join([*builtins, *sorted(installed)])
        raise PluginError(f"unknown {kind} {name!r}; choose one of {known}, or name your own as module:attribute")
    if not isinstance(value, type):
        raise PluginError(f"{kind} {name!r} is {type(value).__name__} {value!r}, not a class")
    problem = check(value)
    if problem:
        raise PluginError(f"{kind} {name!r} ({value.__module__}.{value.__qualname__}): {problem}")
    return value


def missing_methods(cls: type, names: tuple[str, ...]) -> str | None:
    """A `check` for `resolve`: the class must have these methods."""
    missing = [n for n in names if not callable(getattr(cls, n, None))]
    return f"it has no {', '.join(missing)} method{'s' if len(missing) > 1 else ''}" if missing else None
