"""The protocol families a schedule runs under (spec/05-network.md DEF-NET-8,
spec/12-exploration.md DEF-EXP-1): how `schedules.Run` builds a protocol's
network and what it checks after a step, at quiescence and on a publication.

- `Forwarding` (strawman, timed, notified, informed, and plug-ins of that
  family): every broker step checked against the model's handlers
  (`checked_class`: CLM-NET-6, CLM-RCF-4, 5, 7); at quiescence the tables
  equal the ideal (CLM-NET-2 for Strawman, CLM-RCF-1 for the others); a
  publication in a quiescent static state reaches the ideal set (CLM-NET-3).
- `Siena` (siena, siena-nocover): the brokers run unchecked step by step
  (Siena's covering steps are not the model's handlers); at quiescence the
  tables are checked under covering (CLM-SR-8); publications as forwarding.
- `Summaries`: each ROUTE checked against its BROCLI as it goes and no event
  takes more than N - 1 ROUTE hops; at quiescence the plan, merged brokers
  and histories are the model's; a publication in a settled state takes the
  model's route to exactly the clients owed it (CLM-SR-6). The overlay is
  fixed: a schedule of this family holds no churn.
- `Caching` (caching): Strawman's forwarding with caches; at quiescence the
  tables are ideal and every request made (the operation `request`) is
  answered as the model says (CLM-CACHE-6 … 9); a fixed overlay.
"""

from __future__ import annotations

import functools

from subsum.conformance.checks.network import forwarding as forwarding_checks
from subsum.conformance.checks.routing import churn as summary_checks
from subsum.conformance.checks.network.checked_brokers import ProtocolChecks, checked_class
from subsum.conformance.schedules.declared import OVERLAY_CHANGES, Always, AtQuiescence, OnStep, Property
from subsum.conformance.checks.routing.routes import rounds_of, summary_brokers
from subsum.conformance.checks.routing.siena import check_siena_tables
from subsum.conformance.runner.violations import require
from subsum.core.errors import SubsumError
from subsum.core.types import Event
from subsum.conformance.checks.caching.request_response import check_answered_requests
from subsum.impl.network import PROTOCOLS, Network, broker_class_for
from subsum.impl.network.protocols.summaries.broker import SummaryBroker


def _no_violations_counted(net: Network) -> None:
    require(not net.ledger.violations, "CLM-NET-4", lambda: f"the simulator counted {dict(net.ledger.violations)}")


#: What every family checks of the network (DEF-EXP-8): the overlay after each change of it and at quiescence (a
#: broker's neighbor set is its record, compared with the model's in each checked step), and the simulator's count.
COMMON = (Always("overlay", "CLM-NET-1", "the broker links form a forest, neighbor sets are symmetric and agree with the links, "
                 "and every client is listed by its access broker", forwarding_checks.check_overlay, after=OVERLAY_CHANGES | {"quiesce"}),
          Always("client-messages", "CLM-NET-4", "nothing but EVENTs reaches a client", _no_violations_counted))
PUBLICATION = OnStep("publication", "CLM-NET-3", "a publication in a quiescent static state reaches exactly the ideal set, once "
                     "each, over needed links only")


class Forwarding:
    """Strawman and its successors: the model describes every broker step."""

    name = "forwarding"
    churn = True  # the overlay may change (swaps, breaks, crashes, joins)
    #: `subsum explore`'s default bound on timers fired while messages are in flight (None: none; spec/12 DEF-EXP-2)
    overruns: int | None = None

    def broker_class(self, protocol: str) -> type:
        return checked_class(protocol)

    def prepare(self, net: Network) -> None:
        """Whatever the checks need on the network before the first operation."""

    def properties(self, protocol: str) -> tuple[Property, ...]:
        """What a run under `protocol` checks, declared (DEF-EXP-8)."""
        claim = "CLM-NET-2" if protocol in ("strawman", EXTERNAL) else "CLM-RCF-1"
        found = [*COMMON, AtQuiescence("tables", claim, "every table equals the ideal oracle's",
                                       functools.partial(forwarding_checks.check_tables, claim=claim)),
                 OnStep("broker-steps", "CLM-NET-6", "each broker step leaves the model's table and neighbors and sends its messages"),
                 PUBLICATION]
        if protocol != EXTERNAL and issubclass(self.broker_class(protocol), ProtocolChecks):
            found += [OnStep("reconfiguration-steps", "CLM-RCF-7", "each deferral, activation and timer step is the model's"),
                      OnStep("leaf-timers", "CLM-RCF-4", "a leaf broker starts no timer when its link breaks"),
                      OnStep("flushes", "CLM-RCF-5", "a FLUSH a broker holds no task for is only passed on")]
        return tuple(found)

    def publish(self, net: Network, client: int, event: Event, static: bool) -> None:
        forwarding_checks.publish_and_check(net, client, event, static)

    def publishes_locally(self, net: Network, static: bool) -> bool:
        """Whether a publication now is only its access broker's step (`publish` does not follow it to its end):
        what `subsum explore`'s memo may reuse (spec/12 DEF-EXP-7)."""
        return not (net.transport.quiescent() and static)


class Siena(Forwarding):
    """Siena's covering forwarding: tables checked under covering at quiescence."""

    name = "siena"

    def broker_class(self, protocol: str) -> type:
        return broker_class_for(protocol)

    def properties(self, protocol: str) -> tuple[Property, ...]:
        return (*COMMON, AtQuiescence("tables", "CLM-SR-8", "every table holds the ideal filters under covering", check_siena_tables),
                PUBLICATION)


class Summaries(Forwarding):
    """Summary-based routing over a fixed overlay."""

    name = "summaries"
    churn = False
    overruns = 1  # the round timer re-arms each period while a round is unfinished: unbounded, a path never ends

    def broker_class(self, protocol: str) -> type:
        base: type = broker_class_for(protocol)
        return _checked_summary_class(base)

    def properties(self, protocol: str) -> tuple[Property, ...]:
        return (*COMMON,
                Always("route-hops", "CLM-SR-6", "no event takes more than N - 1 ROUTE hops", _short_routes),
                AtQuiescence("settled", "CLM-SR-6", "the plan, the merged brokers and the histories are the model's",
                             summary_checks.check_settled),
                OnStep("routes", "CLM-SR-6", "each ROUTE leaves the brokers of its BROCLI out and grows it"),
                OnStep("publication", "CLM-SR-6", "a publication in a settled state takes the model's route to exactly the "
                       "clients owed it, once each"))

    def publish(self, net: Network, client: int, event: Event, static: bool) -> None:
        rounds = rounds_of(net)
        settled = net.transport.quiescent() and rounds.round >= 0 and not any(b.owner_changed() for b in summary_brokers(net).values())
        if settled:
            summary_checks.publish_and_check(net, client, event, rounds.options["option"])
        else:
            net.publish(client, event)  # while summaries propagate: only the checks of every step

    def publishes_locally(self, net: Network, static: bool) -> bool:
        return False  # whether it is checked reads the rounds, which no broker's record holds


def _short_routes(net: Network) -> None:
    for eid, messages in rounds_of(net).journeys.items():
        hops = sum(1 for kind, _, _ in messages if kind == "ROUTE")
        require(hops <= len(net.brokers) - 1, "CLM-SR-6", lambda: f"event {eid} took {hops} ROUTE hops among {len(net.brokers)} brokers")


class Caching(Forwarding):
    """The caching protocol (spec/09): Strawman's forwarding with caches and client requests. Its steps are not the
    model's plain handlers (no step is compared); at quiescence the tables are the ideal ones and every request
    made is answered as the model says. The overlay is fixed."""

    name = "caching"
    churn = False

    def broker_class(self, protocol: str) -> type:
        return broker_class_for(protocol)

    def properties(self, protocol: str) -> tuple[Property, ...]:
        return (*COMMON, AtQuiescence("tables", "CLM-NET-2", "every table equals the ideal oracle's",
                                      functools.partial(forwarding_checks.check_tables, claim="CLM-NET-2")),
                AtQuiescence("requests", "CLM-CACHE-6", "every request made is answered as the model says: the brokers it "
                             "reached and where it was dropped (7), each response back along its path (6), no copy twice "
                             "but under leaf placement (8), exactly the publications held where it reached (9)",
                             check_answered_requests),
                PUBLICATION)

    def publishes_locally(self, net: Network, static: bool) -> bool:
        return False  # its brokers do not declare their steps local


FORWARDING, SIENA, SUMMARIES, CACHING = Forwarding(), Siena(), Summaries(), Caching()
#: The protocol name of the kit's external broker in schedules and replays (conformance/kit/broker.py).
EXTERNAL = "external"


@functools.cache
def _checked_summary_class(base: type) -> type:
    """`base` (SummaryBroker or a plug-in subclass) with each ROUTE checked against its BROCLI."""
    if base is SummaryBroker:
        return summary_checks.CheckedSummaryBroker
    return type(f"Checked{base.__name__}", (summary_checks.CheckedSummaryBroker, base), {"__slots__": ()})


#: `Broker.family` -> the family's checks.
FAMILIES: dict[str | None, Forwarding] = {"forwarding": FORWARDING, "caching": CACHING, "siena": SIENA, "summaries": SUMMARIES}


def family_of(protocol: str) -> Forwarding:
    """The family whose checks a schedule under `protocol` runs (a registered
    name or a plug-in); exit 2 (SubsumError) for one no family checks. The
    kit's external broker (`subsum conform broker`, recorded as protocol
    "external") speaks Strawman's messages: the forwarding family."""
    if protocol == EXTERNAL:
        return FORWARDING
    family = FAMILIES.get(getattr(broker_class_for(protocol), "family", None))
    if family is not None:
        return family
    checked = sorted(name for name in PROTOCOLS if _checked(PROTOCOLS[name]))
    raise SubsumError(f"protocol {protocol!r} has no schedule checks; schedules run under {', '.join(checked)}, "
                      "or a plug-in of the forwarding, Siena or summaries family")


def schedule_protocols() -> tuple[str, ...]:
    """The registered protocols a schedule can run under (those `family_of` takes)."""
    return tuple(name for name, cls in PROTOCOLS.items() if _checked(cls))


def _checked(cls: type) -> bool:
    return getattr(cls, "family", None) in FAMILIES
