"""The protocol interface: what a broker protocol must provide to run on the
simulator (spec/05-network.md, DEF-NET-2).

A protocol is a `Broker` subclass registered by name (`@register("name")`).
The simulator creates one instance per broker and talks to it in two ways:

- **messages**: a message of kind K from node `src` (a neighbor broker, a
  client, or over the out-of-band channel) runs the method marked
  `@handles("K")` as `method(src, payload, out)`. A kind the class has no
  handler for is an error (`NetworkError`), never silently ignored.
- **overlay notifications**: `link_added(n, rid, out)` when a link to n
  comes up and `link_removed(n, rid, replacement, out)` when it goes, where
  `rid` names the reconfiguration (None for an isolated change) and
  `replacement` is the link that replaces the lost one, `(n1, n2,
  asymmetric)`.

A handler changes its broker's own state and writes everything else it does
to `out` (`actor.Out`): `out.send(dst, kind, payload)` (tree links),
`out.send_direct(...)` (out of band), `out.route_event(targets,
publication)` (a `messages.Publication`: a client target is a delivery),
`out.timer(at, method, *args)` and `out.count(...)`; the network applies the
buffer when the handler returns.

A payload of one part is the value itself (SUB and UNSUB carry a filter);
every other payload is a frozen record of `messages`, one per kind, which
also lists every built-in protocol's messages:

- subscription forwarding with Strawman reconfiguration (seed 002,
  `protocols.forwarding`): SUB, UNSUB, EVENT;
- deferred unsubscriptions and informed link activation (seed 002 §3.5,
  `protocols.deferred`, `protocols.informed`): in addition FLUSH and
  ACTIVATE, the latter out of band;
- summary-based routing (seed 000 §4.3, `protocols.summaries`): SUMMARY,
  DELTA, ROUTE, DELIVER, DELETE-QUERY and DELETE-ANSWER;
- the thesis's baselines (`protocols.baselines`): SUBSCRIPTION,
  UNSUBSCRIPTION, EVENT;
- broker caches with request/response (seeds 003, 004,
  `protocols.caching`): REQUEST, RESPONSE and STORE, with EVENT as above;
- the client-server policies (seed 003 §4, `protocols.client_server`):
  ADVERTISE, REQUEST, RESPONSE.

Each is a new `Broker` subclass with its `@handles` methods; none needs a
change to the overlay, the transport or the accounting.
"""

from __future__ import annotations

import copy
import inspect
from typing import TYPE_CHECKING, Any, Callable, Hashable, Mapping

from subsum.core import plugins
from subsum.impl.network.actor import Out
from subsum.impl.network.overlay import NetworkError

if TYPE_CHECKING:
    from subsum.impl.network.sim import Network


def handles(*kinds: str) -> Callable:
    """Mark a broker method as the handler of messages of these kinds."""

    def mark(method: Callable) -> Callable:
        method.handles = kinds  # type: ignore[attr-defined]
        return method

    return mark


class Broker:
    """The base of every protocol's broker: its id, its neighbors (brokers
    and clients), its protocol's own state (in subclasses), and dispatch by
    message kind. A broker holds no reference to its network: what it does
    goes to the out-buffer its handler is given (`actor.Out`)."""

    __slots__ = ("id", "neighbors", "cached_hash")

    #: The protocol family whose steps and checks a class's brokers follow (spec/05 DEF-NET-8, spec/12 DEF-EXP-1):
    #: "forwarding" (seed 002's subscription forwarding, Strawman and its successors), "siena", "caching",
    #: "summaries"; None for a broker of no family. A subclass inherits its base's.
    family: str | None = None

    #: Whether something reads what this class's handlers write (a check's broker does): then the network gives each
    #: handler a buffer and applies it when the handler returns; otherwise it applies each effect as it is written.
    reads_out_buffer = False

    #: Whether a message's effect at this broker depends only on its record, the sender, the message, the clock and
    #: the network's settings, and changes only the record, the out-buffer and what the brokers share through the
    #: methods the shared state lists in its `writes`: then a checker may run each such step once and reuse what it
    #: did (`subsum explore`'s memo of local steps, spec/12 DEF-EXP-7). A subclass whose handlers read more (the
    #: overlay, other brokers, a shared counter) must say False.
    local_deliveries = False
    #: The same for the overlay's notifications (`link_added`, `link_removed`): each depends only on the record, the
    #: notification's arguments, the clock and the settings, and changes only what a local delivery changes.
    local_notifications = False

    #: message kind -> the name of its handler method (names, so that an override in a subclass, or a test's
    #: patch of the method made before the network is built, is what runs: `handler_table`)
    handlers: dict[str, str] = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        table: dict[str, str] = {}
        for base in reversed(cls.__mro__[1:]):  # every base's table, the nearest base winning
            table.update(vars(base).get("handlers", {}))
        table.update((kind, name) for name, fn in vars(cls).items() if hasattr(fn, "handles") for kind in fn.handles)
        cls.handlers = table

    def __init__(self, bid: int, shared: Any) -> None:
        """`shared`: what the network's brokers share (`shared_state`), for a broker that sizes itself by it."""
        self.id = bid
        self.neighbors: set[int] = set()
        #: A checker's hash of this broker's state (`subsum explore`'s fingerprint), kept once no network owns the
        #: broker (`host.BrokerHost.own`): from then on a handler changes a copy, never this object, so the hash
        #: stays true. None until then; never copied.
        self.cached_hash: int | None = None

    def copy(self) -> Broker:
        """A copy whose changes leave this broker as it is: what a forked network copies before a handler first
        changes a broker it shares with the network it was forked from (copy on write, `sim.Network.fork`). Sets,
        lists and dicts are copied all the way down; immutable values are shared; any other object is deep-copied."""
        cls = type(self)
        clone = cls.__new__(cls)
        memo: dict[int, Any] = {}  # one for every field: two fields holding one object hold one copy of it
        for name in _slot_names(cls):
            if hasattr(self, name):
                setattr(clone, name, copied(getattr(self, name), memo))
        clone.cached_hash = None  # the copy is the one a handler changes
        if hasattr(self, "__dict__"):
            clone.__dict__.update((name, copied(value, memo)) for name, value in self.__dict__.items())
        return clone

    def explore_view(self) -> Hashable | None:
        """What of this record tells two states apart for a checker (`subsum explore`'s fingerprint, spec/12
        DEF-EXP-3): records with equal views behave alike from here on. None, the default, lets the checker read
        every field (a plug-in that declares no view); each built-in protocol declares its own.

        >>> Broker(3, None).explore_view() is None
        True
        """
        return None

    def started(self, out: Out) -> None:
        """The broker has joined the network (before any link): a protocol that must act at once does so here."""

    def link_added(self, n: int, rid: int | None, out: Out) -> None:
        """A link to n is up; `rid` names the reconfiguration it belongs to (None: an isolated add)."""
        raise NotImplementedError

    def link_removed(self, n: int, rid: int | None, replacement: tuple | None, out: Out) -> None:
        """The link to n is gone. `replacement` = (n1, n2, asymmetric) is the
        new link that replaces it, n1 on this broker's side, `asymmetric`
        True when n is dead (a crash: n tells nobody)."""
        raise NotImplementedError

    @classmethod
    def shared_state(cls, net: Network) -> object:
        """State all brokers of one network share (e.g. a filter index),
        made once per network, before any broker; handlers read it as
        `out.shared`. Protocol settings are in `net.options`."""
        return None


_SLOT_NAMES: dict[type, tuple[str, ...]] = {}


def _slot_names(cls: type) -> tuple[str, ...]:
    """Every slot of the class and its bases, once (remembered per class)."""
    names = _SLOT_NAMES.get(cls)
    if names is None:
        names = _SLOT_NAMES[cls] = tuple(dict.fromkeys(name for klass in reversed(cls.__mro__) for name in vars(klass).get("__slots__", ())))
    return names


_SHARED_AS_IS = (int, float, str, bool, type(None), frozenset, tuple, bytes)


def copied(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """`value`, its sets, lists and dicts copied all the way down; values shared (immutable builtins, and objects hashed
    by value, such as filters and message records; a tuple's items must be values too); any other object
    deep-copied (with `memo`, `copy.deepcopy`'s, shared by the calls that copy one object's fields).

    >>> table = {"f": {1, 2}}
    >>> clone = copied(table); clone["f"].add(3); table
    {'f': {1, 2}}
    """
    kind = type(value)
    if kind is set:
        return set(value)
    if kind is dict:
        return {k: copied(v, memo) for k, v in value.items()}
    if kind is list:
        return [copied(v, memo) for v in value]
    if isinstance(value, _SHARED_AS_IS) or kind.__hash__ not in (None, object.__hash__):
        return value  # hashed by value: a value (a filter, an event, a message record)
    return copy.deepcopy(value, memo)


def protocol_settings(protocol: str, options: Mapping, defaults: Mapping, choices: Mapping[str, tuple] | None = None) -> dict:
    """A protocol's settings: its `defaults` overridden by `options`
    (`Network(options=...)`). An option it does not know, or a value not
    among its `choices` (key -> the values allowed), is a NetworkError
    naming it.

    >>> protocol_settings("demo", {"k": 2}, {"k": 1, "mode": "a"}, {"mode": ("a", "b")})
    {'k': 2, 'mode': 'a'}
    """
    unknown = set(options) - set(defaults)
    if unknown:
        raise NetworkError(f"unknown {protocol} option(s) {sorted(unknown)}; expected some of {sorted(defaults)}")
    settings = {**defaults, **options}
    for key, allowed in (choices or {}).items():
        if settings[key] not in allowed:
            raise NetworkError(f"{protocol} option {key!r}: {settings[key]!r} is not one of {', '.join(map(str, allowed))}")
    return settings


PROTOCOLS: dict[str, type[Broker]] = {}


def register(name: str) -> Callable[[type[Broker]], type[Broker]]:
    """Class decorator: make a broker class available as protocol `name`."""

    def add(cls: type[Broker]) -> type[Broker]:
        if name in PROTOCOLS and PROTOCOLS[name] is not cls:
            raise NetworkError(f"protocol {name!r} is registered already (by {PROTOCOLS[name].__qualname__})")
        PROTOCOLS[name] = cls
        return cls

    return add


def broker_class_for(protocol: str) -> type[Broker]:
    """The broker class `protocol` stands for: a registered name, an
    installed `subsum.protocols` entry point, or `module:attribute`
    (subsum.core.plugins; spec/11-plugins.md DEF-PLUG-1). A plug-in is a
    `Broker` subclass."""
    def not_a_broker(cls: type) -> str | None:
        if not issubclass(cls, Broker):
            return "a protocol is a subclass of subsum.impl.network.Broker"
        return outdated_override(cls)

    try:
        return plugins.resolve("protocol", protocol, PROTOCOLS, not_a_broker)
    except plugins.PluginError as exc:
        raise NetworkError(str(exc)) from None


def _positional(fn: Callable) -> list[str]:
    return [p.name for p in inspect.signature(fn).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def handler_table(cls: type[Broker]) -> dict[str, Callable]:
    """Message kind -> the function that handles it, `function(broker, src, payload, out)`: what a network looks up
    for each message it delivers, built once when the network is (`sim.Network`).

    >>> class Echo(Broker):
    ...     @handles("PING")
    ...     def ping_received(self, n, payload, out): out.send(n, "PONG", payload)
    >>> handler_table(Echo)["PING"] is Echo.ping_received
    True
    """
    return {kind: getattr(cls, name) for kind, name in cls.handlers.items()}


def outdated_override(cls: type[Broker]) -> str | None:
    """What is wrong with a plug-in class written for the interface before brokers became actors (issue 52): a
    method overriding one of subsum's broker methods whose last parameter is `out` but does not take it itself.

    >>> class Old(Broker):
    ...     def link_added(self, n, rid=None): pass
    >>> Old.__module__ = "myplugin"  # a user's module
    >>> print(outdated_override(Old))  # doctest: +ELLIPSIS
    Old.link_added(self, n, rid) overrides Broker.link_added(self, n, rid, out): a handler now takes `out`, ...
    """
    for klass in cls.__mro__:
        if klass.__module__.startswith("subsum."):
            continue
        if inspect.isfunction(vars(klass).get("receive")):
            return (f"{klass.__qualname__}.receive is never called: the network hands each message to the handler of "
                    "its kind, a method marked @handles(kind) that takes (self, src, payload, out) (spec/05 DEF-NET-2, "
                    "spec/11-plugins.md)")
        for name, fn in vars(klass).items():
            if name.startswith("__") or not inspect.isfunction(fn):
                continue
            base = next((b for b in cls.__mro__ if b.__module__.startswith("subsum.") and name in vars(b)), None)
            if base is None or not inspect.isfunction(vars(base)[name]):
                continue
            want, got = _positional(vars(base)[name]), _positional(fn)
            if want and want[-1] == "out" and (not got or got[-1] != "out") and len(got) < len(want):
                return (f"{klass.__qualname__}.{name}({', '.join(got)}) overrides {base.__qualname__}.{name}({', '.join(want)}): "
                        "a handler now takes `out`, its broker's out-buffer, as its last argument, and sends with "
                        "out.send(dst, kind, payload) rather than self.net.send(self.id, dst, kind, payload) (spec/05 DEF-NET-2, "
                        "spec/11-plugins.md)")
    return None
