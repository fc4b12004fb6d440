"""The options of the commands that run broker networks (`simulate`, `fuzz`,
`explore`, `bench`): the protocol, the reconfiguration timeouts and the
topology. Apart from `options.py` because their choices and defaults come
from `subsum.impl.network`, which imports networkx: the other commands
start without it."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import click

from subsum.cli.common.options import ComponentName, FiniteFloat
from subsum.core.errors import SubsumError
from subsum.impl.network import PROTOCOLS, TOPOLOGIES
from subsum.impl.network.protocol import broker_class_for
from subsum.impl.network.sim import DEFER_TIMEOUT, SUB_TIMEOUT


def protocol_option(help_text: str, choices=tuple(PROTOCOLS), load: Callable[[str], object] = broker_class_for) -> Callable:
    """`--protocol`: a built-in protocol from `choices`, or a plug-in that `load` accepts (a Broker subclass, or one of a
    family the command checks)."""
    return click.option("--protocol", type=ComponentName("protocol", tuple(choices), load), default="strawman", show_default=True,
                        help=help_text + " Or a plug-in: a Broker subclass named as module:attribute or by a subsum.protocols "
                                         "entry point (spec/11-plugins.md).")


def timeout_options(fn: Callable) -> Callable:
    fn = click.option("--sub-timeout", type=FiniteFloat(0.0), default=SUB_TIMEOUT, show_default=True,
                      help="Informed link activation: simulated ms before held-back subscriptions are reconsidered.")(fn)
    return click.option("--defer-timeout", type=FiniteFloat(0.0), default=DEFER_TIMEOUT, show_default=True,
                        help="Deferred unsubscriptions: simulated ms before the waiting UNSUBs run (0 is Strawman).")(fn)


def topology_option(fn: Callable) -> Callable:
    return click.option("--topology", default="random-tree", show_default=True, callback=_check_topology,
                        help=f"{', '.join(TOPOLOGIES)}, or a networkx edge-list FILE (cycles are cut to a BFS spanning tree; "
                             "links that form several components are refused unless a forest is asked for).")(fn)


def _check_topology(_ctx, _param, value: str) -> str:
    """A named topology, or a file: a folder or a missing file is refused here;
    the file's content is read (with the input limits) when the work starts."""
    if value in TOPOLOGIES:
        return value
    if Path(value).is_dir():
        raise SubsumError(f"--topology {value}: is a directory; expected {', '.join(TOPOLOGIES)} or an edge-list file")
    if not Path(value).exists():
        raise SubsumError(f"--topology {value!r} is neither {', '.join(TOPOLOGIES)} nor an existing file")
    return value
