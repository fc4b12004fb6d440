"""The client-server system over pub/sub on the simulator (seed 003 §4;
spec/10-client-server.md DEF-CS-1 … 3), registered as protocol
"client-server".

- ADVERTISE(m) floods from a server's broker: every broker's AT maps m to
  the neighbor toward m's server (its own id at the server's broker).
- A client's request for m enters its broker as REQUEST
  (`messages.ServerRequest`: rid, m, stack, mode, position, route): `stack` is the brokers it has visited, the latest first,
  the client last; `mode` is "path" (the AT path), "probe" (a SOHA active
  neighbor), "transit" (on the way to an SS interested broker, `route` the
  rest of the way) or "interest" (at it).
- A broker that answers sends RESPONSE (`messages.ServerResponse`: rid,
  stack, answer, hops) back: each
  broker pops its id, caches m unless it holds it or serves it, and passes
  it on; the client's broker records it at the client.

Caches are `subsum.impl.caching` caches (options `cache_policy`,
`capacity`), and read the request's step (`now` in the request), not the
simulator's clock: the thesis's time is its steps. The request policy is
option `policy`: server, sc, soha or ss. Option `soha_probes` "client"
has SOHA probe the client's broker's neighbors only (the default "path":
every AT-path broker's before the first path hit); `lfu_ties` "oldest"
gives rate-LFU caches the other tie rule (spec/09). Option `ss_memory` is SS's
reading of "a broker with a client requesting the same message"
(spec/10): None, a client there ever requested it (the default); S ≥ 0,
one did within the last S steps (0: in the same step).
"""

from __future__ import annotations

from typing import cast

import attrs

from subsum.core.names import LFU_TIES, REQUEST_POLICIES, SOHA_PROBES
from subsum.impl.caching import make_cache
from subsum.impl.caching.policies import POLICIES as CACHE_POLICIES
from subsum.impl.network.actor import Out
from subsum.impl.network.messages import ServerAnswer, ServerRequest, ServerResponse
from subsum.impl.network.overlay import NetworkError
from subsum.impl.network.protocol import Broker, handles, protocol_settings, register
from subsum.impl.network.transport import CLIENT_BASE

#: the protocol's settings when `Network(options=...)` names none: request policy, cache policy, cache slots
POLICY = "sc"
CACHE_POLICY = "lfu"
SLOTS = 10
SS_MEMORY = None
DEFAULTS = {"policy": POLICY, "cache_policy": CACHE_POLICY, "capacity": SLOTS, "ss_memory": SS_MEMORY, "soha_probes": SOHA_PROBES[0],
            "lfu_ties": LFU_TIES[0]}


def check_ss_memory(memory: int | None) -> int | None:
    """SS's memory in steps: None (ever) or an integer ≥ 0; anything else is a ValueError."""
    if memory is not None and (isinstance(memory, bool) or not isinstance(memory, int) or memory < 0):
        raise ValueError(f"ss_memory must be None (ever) or a whole number of steps >= 0, not {memory!r}")
    return memory


def interested_brokers(table: dict[int, float], now: float, memory: int | None) -> set[int]:
    """SS's interested brokers for one message: those whose clients
    requested it (`table`: broker -> the step of its latest request), within
    the last `memory` steps of `now` (None: ever)."""
    if memory is None:
        return set(table)
    return {b for b, last in table.items() if last >= now - memory}


@attrs.frozen
class Answer:
    """One response as the client sees it (DEF-CS-3)."""

    responder: int
    hops: int
    from_path: bool
    position: int

    def order(self) -> tuple[int, bool, int, int]:
        return (self.hops, not self.from_path, self.position, self.responder)


@attrs.define
class Request:
    """One request and what came of it."""

    rid: int
    client: int
    broker: int
    message: str
    now: float
    server_broker: int
    asked: list[int] = attrs.Factory(list)
    answers: list[Answer] = attrs.Factory(list)

    def ranked(self) -> list[Answer]:
        return sorted(self.answers, key=Answer.order)

    def outcome(self) -> tuple[int, int, bool]:
        """DEF-CS-3 of the answers, ranked once: (delay, overhead, hit)."""
        first, *rest = self.ranked()
        return first.hops, sum(a.hops for a in rest), not (first.from_path and first.responder == self.server_broker)

    def hit_place(self) -> str:
        """Where the first answer came from, when it is a hit (`names.HIT_PLACES`): the client's broker, a broker
        further on the AT path, or one off it; "" when the server answered first (no hit)."""
        first = self.ranked()[0]
        if not first.from_path:
            return "off"
        if first.responder == self.server_broker:
            return ""
        return "client" if first.hops == 0 else "path"

    @property
    def delay(self) -> int:
        return self.outcome()[0]

    @property
    def overhead(self) -> int:
        return self.outcome()[1]

    @property
    def hit(self) -> bool:
        return self.outcome()[2]


class ClientServerNetwork:
    """What the brokers share: the settings, the servers, the SS table, the requests."""

    def __init__(self, net) -> None:
        self.options = protocol_settings("client-server", net.options, DEFAULTS,
                                         {"policy": REQUEST_POLICIES, "cache_policy": tuple(CACHE_POLICIES), "soha_probes": SOHA_PROBES,
                                          "lfu_ties": LFU_TIES})
        self.policy: str = self.options["policy"]
        self.server_of: dict[str, int] = {}
        try:
            self.ss_memory = check_ss_memory(self.options["ss_memory"])
        except ValueError as error:
            raise NetworkError(f"client-server option 'ss_memory': {error}") from None
        self.interested: dict[str, dict[int, float]] = {}  # the ST-like table: m -> broker -> step of its latest request
        self.requests: dict[int, Request] = {}


@register("client-server")
class ClientServerBroker(Broker):
    """One broker of the client-server system (DEF-CS-2)."""

    __slots__ = ("cache", "at")

    def __init__(self, bid: int, shared) -> None:
        super().__init__(bid, shared)
        options = shared.options
        self.cache = make_cache(options["cache_policy"], options["capacity"], options["lfu_ties"])
        self.at: dict[str, int] = {}  # message -> next hop toward its server (own id: served here)

    @classmethod
    def shared_state(cls, net) -> ClientServerNetwork:
        return ClientServerNetwork(net)

    def brokers_around(self) -> list[int]:
        return sorted(n for n in self.neighbors if n < CLIENT_BASE)

    # --- advertisements (DEF-CS-1) -----------------------------------------------------------
    @handles("ADVERTISE")
    def advertise_received(self, n: int, m: str, out: Out) -> None:
        self.at[m] = self.id if n >= CLIENT_BASE else n
        for b in self.brokers_around():
            if b != n:
                out.send(b, "ADVERTISE", m)

    # --- requests (DEF-CS-2) -----------------------------------------------------------------
    @handles("REQUEST")
    def request_received(self, src: int, request: ServerRequest, out: Out) -> None:
        rid, m, mode, position = request.rid, request.message, request.mode, request.position
        shared = out.shared
        record = shared.requests[rid]
        stack = (self.id, *request.stack)
        policy = shared.policy
        if mode == "transit":
            nxt, rest = request.route[0], request.route[1:]
            out.send(nxt, "REQUEST", ServerRequest(rid, m, stack, "interest" if not rest else "transit", position, rest))
            return
        if src < CLIENT_BASE:
            record.asked.append(self.id)
        serving = self.at.get(m) == self.id
        if mode == "path" and serving:
            self.respond(record, stack, True, position, out)
            return
        if policy != "server" and str(m) in self.cache:
            self.cache.hit((m,), record.now)
            self.respond(record, stack, mode == "path", position, out)
            return
        if mode != "path":
            return  # a probe or an interested broker that misses drops the request
        if policy == "soha" and (position == 0 or shared.options["soha_probes"] == "path"):
            previous = stack[1] if len(stack) > 1 else None
            for q in self.brokers_around():
                if q != previous and q != self.at.get(m):
                    out.send(q, "REQUEST", ServerRequest(rid, m, stack, "probe", position))
        if policy == "ss" and position == 0:
            self.ask_interested(record, stack, out)
        out.send(self.at[m], "REQUEST", ServerRequest(rid, m, stack, "path", position + 1))

    def ask_interested(self, record: Request, stack: tuple[int, ...], out: Out) -> None:
        """SS: the client's broker asks every interested broker off the AT path
        (each request source-routed along the tree path there)."""
        toward_me = out.overlay.walk(self.id)  # broker -> its neighbor toward this one

        def route_from_me(q: int) -> list[int]:
            back = [q]
            while back[-1] != self.id:
                back.append(cast(int, toward_me[back[-1]]))
            return back[::-1]

        path = route_from_me(record.server_broker)
        shared = out.shared
        table = shared.interested.get(record.message, {})
        for q in sorted(interested_brokers(table, record.now, shared.ss_memory) - set(path)):
            route = route_from_me(q)[1:]
            mode = "interest" if len(route) == 1 else "transit"
            out.send(route[0], "REQUEST", ServerRequest(record.rid, record.message, stack, mode, len(path), tuple(route[1:])))

    def respond(self, record: Request, stack: tuple[int, ...], from_path: bool, position: int, out: Out) -> None:
        self.pass_response(record, stack, ServerAnswer(self.id, from_path, position), 0, out)

    # --- responses ---------------------------------------------------------------------------
    def pass_response(self, record: Request, stack: tuple[int, ...], answer: ServerAnswer, hops: int, out: Out) -> None:
        rest = stack[1:]
        nxt = rest[0]
        if nxt >= CLIENT_BASE:
            record.answers.append(Answer(answer.responder, hops, answer.from_path, answer.position))
            return
        out.send(nxt, "RESPONSE", ServerResponse(record.rid, rest, answer, hops + 1))

    @handles("RESPONSE")
    def response_received(self, src: int, response: ServerResponse, out: Out) -> None:
        record = out.shared.requests[response.rid]
        m = record.message
        if out.shared.policy != "server" and self.at.get(m) != self.id:
            self.cache.insert(m, record.now)  # en-route caching; a held m is left alone
        self.pass_response(record, response.stack, response.answer, response.hops, out)

    def link_added(self, n: int, rid: int | None, out: Out) -> None:
        self.neighbors.add(n)

    def link_removed(self, n: int, rid: int | None, replacement: tuple | None, out: Out) -> None:
        raise NetworkError("the client-server system runs on a fixed overlay")


def add_server(net, broker: int, m: str) -> None:
    """A server at `broker` serving message m advertises it."""
    shared = cast(ClientServerNetwork, net.shared)
    if m in shared.server_of:
        raise NetworkError(f"message {m!r} has a server already, at broker {shared.server_of[m]}")
    shared.server_of[m] = broker
    server = net.add_client(broker)
    net.deliver_from_client(server, "ADVERTISE", m)


def request(net, client: int, m: str, now: float) -> Request:
    """Client `client` requests message m at step `now`; returns the request's record (filled as the network runs)."""
    shared = cast(ClientServerNetwork, net.shared)
    broker = net.clients[client]
    rid = len(shared.requests)
    record = Request(rid, client, broker, m, now, shared.server_of[m])
    shared.requests[rid] = record
    net.deliver_from_client(client, "REQUEST", ServerRequest(rid, m, (client,), "path", 0))
    shared.interested.setdefault(m, {})[broker] = now
    return record
