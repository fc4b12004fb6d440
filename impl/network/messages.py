"""The messages brokers send one another (spec/05-network.md DEF-NET-2), one
frozen record per kind whose payload has more than one part.

A message is a kind (a string, which the ledger counts and the trace
names) and a payload. A payload of one part is that value itself: SUB and
UNSUB carry a filter, FLUSH a reconfiguration id, STORE an event id,
ADVERTISE a message id. Every other payload is one of the records below,
named after what it carries; a handler reads its fields by name.

| kind                    | protocol            | payload                      |
|-------------------------|---------------------|------------------------------|
| SUB, UNSUB              | forwarding family   | a filter                     |
| EVENT                   | every protocol      | `Publication`                |
| FLUSH                   | notified, informed  | a reconfiguration id         |
| ACTIVATE                | informed            | `Activate`                   |
| SUMMARY, DELTA          | summaries           | `SummaryDelta`               |
| DELETE-QUERY            | summaries           | `DeleteQuery`                |
| DELETE-ANSWER           | summaries           | `DeleteAnswer`               |
| ROUTE                   | summaries           | `RouteEvent`                 |
| DELIVER                 | summaries           | `DeliverEvent`               |
| SUBSCRIPTION, UNSUBSCR. | broadcast           | a filter                     |
| STORE                   | caching             | an event id                  |
| REQUEST                 | caching             | `CacheRequest`               |
| RESPONSE                | caching             | `CacheResponse`              |
| ADVERTISE               | client-server       | a message id                 |
| REQUEST                 | client-server       | `ServerRequest`              |
| RESPONSE                | client-server       | `ServerResponse`             |

An EVENT's record is made once, when the event is published, and passed
on unchanged from broker to broker (`actor.Out.route_event`).

>>> from subsum.core.types import Attribute, Event
>>> p = Publication(7, Event((Attribute("x", "int", 1),)))
>>> p.eid
7
"""

from __future__ import annotations

from typing import Any, Mapping

import attrs

from subsum.core.types import Event, Subscription
from subsum.impl.summary import Delta


@attrs.frozen
class Publication:
    """EVENT: published event `eid`, with its attributes."""

    eid: int
    event: Event


@attrs.frozen
class Activate:
    """ACTIVATE (DEF-RCF-4): for reconfiguration `rid`, the filters `held`
    only the lost neighbor subscribed, to be held back over the new link
    to `far_end`."""

    rid: int
    held: frozenset[Subscription]
    far_end: int


@attrs.frozen
class SummaryDelta:
    """SUMMARY (round 0) and DELTA (DEF-SR-4): a broker's joined delta of
    round `round`, and the Merged_Brokers list that travels with it."""

    round: int
    delta: Delta
    merged: frozenset[int]


@attrs.frozen
class DeleteQuery:
    """DELETE-QUERY (DEF-SR-4, method 1): in round `round`, ask an owner for
    the constraints of these IDs, per summary key."""

    round: int
    query: Mapping[Any, set[int]]


@attrs.frozen
class DeleteAnswer:
    """DELETE-ANSWER: the owner's (ID, constraint) pairs per key, for round `round`."""

    round: int
    answer: Mapping[Any, list]


@attrs.frozen
class RouteEvent:
    """ROUTE (DEF-SR-2): the event goes on to the next broker with the
    brokers checked so far (BROCLI)."""

    eid: int
    event: Event
    brocli: frozenset[int]
    publisher: int


@attrs.frozen
class DeliverEvent:
    """DELIVER (DEF-SR-2): the event for an owner, with the IDs of its
    subscriptions a summary matched, for the owner's re-check."""

    eid: int
    event: Event
    ids: frozenset[int]
    publisher: int


@attrs.frozen
class CacheRequest:
    """REQUEST of the caching protocol (DEF-CACHE-7): request `rid` for the
    past publications `filter` matches; `path` the nodes it came by, the
    latest first and the client last."""

    rid: int
    filter: Subscription
    path: tuple[int, ...]


@attrs.frozen
class CacheResponse:
    """RESPONSE of the caching protocol: publication `message` for request
    `rid`, source-routed back along `stack`; `index` numbers it among the
    request's responses."""

    rid: int
    message: int
    stack: tuple[int, ...]
    index: int


@attrs.frozen
class ServerRequest:
    """REQUEST of the client-server system (DEF-CS-2): request `rid` for
    `message`. `stack` is the brokers visited, the latest first and the
    client last; `mode` is "path" (along the AT path), "probe" (a SOHA
    neighbor), "transit" (on the way to an SS interested broker, `route`
    the rest of the way) or "interest" (at it); `position` is the asking
    broker's place on the AT path."""

    rid: int
    message: str
    stack: tuple[int, ...]
    mode: str
    position: int
    route: tuple[int, ...] = ()


@attrs.frozen
class ServerAnswer:
    """Who answered a client-server request: the responder, whether it is
    on the AT path, and its place there."""

    responder: int
    from_path: bool
    position: int


@attrs.frozen
class ServerResponse:
    """RESPONSE of the client-server system: `answer` travelling back along
    `stack`, `hops` broker hops so far."""

    rid: int
    stack: tuple[int, ...]
    answer: ServerAnswer
    hops: int
