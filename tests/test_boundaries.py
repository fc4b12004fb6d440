"""Every validator on both sides of each bound (issue 57): per validator, a
table of bounds, each with the last value accepted and the first refused. A
check that admits an index equal to its array's length (`<=` for `<`) is the
classic off-by-one; the row with that length as its first refused value
fails on it.

The validators: `ColumnarBatch.check` and `SubscriptionColumns.check` (what
the compiled kernels trust), the replay schemas (`subsum replay`), the CLI's
ranges (each option's own converter and callback, without running the
command), and the limits (line length, 64-bit ints, explore's scopes).
"""

from __future__ import annotations

import json
import math

import click
import numpy as np
import pytest

from subsum.cli import main
from subsum.conformance.explore.scope import Scope
from subsum.conformance.replays.formats import load_cache, load_schedule
from subsum.core.errors import InputError, SubsumError
from subsum.core.inputs import DEFAULT_MAX_LINE_BYTES, read_input, set_max_line_bytes
from subsum.core.types import InvalidValue, check_value
from subsum.impl.matching.columnar.batch import Column, ColumnarBatch
from subsum.impl.matching.columnar.subscription_columns import ConstraintColumn, SubscriptionColumns
from subsum.impl.matching.ops import OP_CODE
from subsum.impl.network.transport import CLIENT_BASE

I64 = np.int64


def both_sides(check, accepted, refused, error, message: str = "") -> None:
    """`check(accepted)` passes; `check(refused)` raises `error`, its text holding `message`."""
    check(accepted)
    with pytest.raises(error) as caught:
        check(refused)
    assert message in str(caught.value), str(caught.value)


# --- ColumnarBatch.check: two events, names ["x"], strings ["a", "b"] -------------------------------------

def batch(event=(0, 1), name=(0, 0), string_code=(0, 1), n_events=2) -> ColumnarBatch:
    return ColumnarBatch(n_events, ["x"], ["a", "b"], {
        "int": Column(np.array(event, I64), np.array(name, I64), np.array([1, 2], I64)),
        "string": Column(np.array([0, 1], I64), np.array([0, 0], I64), np.array(string_code, I64))})


BATCH = [  # (bound, build from the value, last accepted, first refused, message)
    ("event index < n_events", lambda v: batch(event=(0, v)), 1, 2, "event codes must lie in [0, 2)"),
    ("event index >= 0", lambda v: batch(event=(v, 1)), 0, -1, "event codes must lie in [0, 2)"),
    ("name code < len(names)", lambda v: batch(name=(0, v)), 0, 1, "name codes must lie in [0, 1)"),
    ("name code >= 0", lambda v: batch(name=(v, 0)), 0, -1, "name codes must lie in [0, 1)"),
    ("string code < len(strings)", lambda v: batch(string_code=(0, v)), 1, 2, "value codes must lie in [0, 2)"),
    ("string code >= 0", lambda v: batch(string_code=(v, 1)), 0, -1, "value codes must lie in [0, 2)"),
    ("n_events >= 0", lambda v: ColumnarBatch(v, [], [], {}), 0, -1, "n_events must be an integer >= 0"),
    ("n_events covers every index", lambda v: batch(n_events=v), 2, 1, "event codes must lie in [0, 1)"),
]


@pytest.mark.parametrize("bound, build, accepted, refused, message", BATCH, ids=[row[0] for row in BATCH])
def test_columnar_batch_bounds(bound, build, accepted, refused, message):
    both_sides(lambda v: build(v).check(), accepted, refused, ValueError, message)


# --- SubscriptionColumns.check: subscriptions s1, s2; names ["x"]; strings ["a", "b*"] ------------------

def columns(sub=(0, 1), name=(0, 0), int_op=(OP_CODE["<"], OP_CODE["<"]), string_code=(0, 1)) -> SubscriptionColumns:
    return SubscriptionColumns(["s1", "s2"], ["x"], ["a", "b*"], {
        "int": ConstraintColumn(np.array(sub, I64), np.array(name, I64), np.array(int_op, I64), np.array([5, 1], I64)),
        "string": ConstraintColumn(np.array([0, 1], I64), np.array([0, 0], I64), np.array([OP_CODE["="], OP_CODE["prefix"]], I64),
                                   np.array(string_code, I64))})


INT_OPS = sorted(OP_CODE[op] for op in ("=", "!=", "<", "<=", ">", ">="))
assert INT_OPS == list(range(INT_OPS[0], INT_OPS[-1] + 1)) and INT_OPS[-1] + 1 not in (OP_CODE["any"],)
COLUMNS = [
    ("sub code < len(ids)", lambda v: columns(sub=(0, v)), 1, 2, "sub codes must lie in [0, 2)"),
    ("sub code >= 0", lambda v: columns(sub=(v, 1)), 0, -1, "sub codes must lie in [0, 2)"),
    ("name code < len(names)", lambda v: columns(name=(0, v)), 0, 1, "name codes must lie in [0, 1)"),
    ("name code >= 0", lambda v: columns(name=(v, 0)), 0, -1, "name codes must lie in [0, 1)"),
    ("int operator code, top", lambda v: columns(int_op=(OP_CODE["<"], v)), INT_OPS[-1], INT_OPS[-1] + 1, "which int does not allow"),
    ("int operator code, bottom", lambda v: columns(int_op=(v, OP_CODE["<"])), INT_OPS[0], INT_OPS[0] - 1, "which int does not allow"),
    ("string value code < len(strings)", lambda v: columns(string_code=(0, v)), 1, 2, "value codes must lie in [0, 2)"),
    ("string value code >= 0", lambda v: columns(string_code=(v, 1)), 0, -1, "value codes must lie in [0, 2)"),
]


@pytest.mark.parametrize("bound, build, accepted, refused, message", COLUMNS, ids=[row[0] for row in COLUMNS])
def test_subscription_columns_bounds(bound, build, accepted, refused, message):
    both_sides(lambda v: build(v).check(), accepted, refused, ValueError, message)


# --- replay schemas -----------------------------------------------------------------------------------------

def schedule_doc(brokers=2, clients=(1, 1), schedule=(), step=0, seed=0, defer=1000.0) -> dict:
    return {"format": "subsum-replay", "version": 1, "protocol": "strawman", "seed": seed, "defer_timeout": defer,
            "topology": {"kind": "path", "brokers": brokers, "links": [[i, i + 1] for i in range(brokers - 1)], "clients": list(clients)},
            "schedule": list(schedule), "violation": {"claim": "CLM-NET-1", "message": "m", "step": step}}


def with_brokers(doc: dict, brokers: int) -> dict:
    """`doc` with its broker count alone changed (its links and clients left as they are)."""
    doc["topology"]["brokers"] = brokers
    return doc


def subscribe(client: int) -> dict:
    return {"op": "subscribe", "client": client, "filter": "x > 1"}


SCHEDULE = [
    ("topology brokers <= 10,000", lambda v: with_brokers(schedule_doc(brokers=10_000, clients=[0] * 10_000), v), 10_000, 10_001,
     "topology.brokers"),
    ("topology brokers is an integer", lambda v: with_brokers(schedule_doc(), v), 2, 2.0, "2.0 is not of type 'integer'"),
    ("a broker index fits an int32", lambda v: schedule_doc(schedule=[{"op": "crash", "broker": v, "lose": False}]), 1, 2**31,
     "schedule[0].broker"),
    ("topology brokers >= 1", lambda v: schedule_doc(brokers=v, clients=[0] * v), 1, 0, "topology.brokers"),
    ("clients in all <= 100,000", lambda v: schedule_doc(clients=(100_000, v)), 0, 1, "at most 100,000"),
    ("a client exists", lambda v: schedule_doc(schedule=[subscribe(v)]), CLIENT_BASE + 1, CLIENT_BASE + 2, "does not exist"),
    ("client ids start at CLIENT_BASE", lambda v: schedule_doc(schedule=[subscribe(v)]), CLIENT_BASE, CLIENT_BASE - 1, "client"),
    ("a crashed broker exists", lambda v: schedule_doc(schedule=[{"op": "crash", "broker": v, "lose": False}]), 1, 2,
     "broker 2 does not exist (brokers are 0 .. 1)"),
    ("violation step <= operations (the closing quiesce)", lambda v: schedule_doc(schedule=[subscribe(CLIENT_BASE)], step=v), 1, 2,
     "violation.step"),
    ("violation step >= 0", lambda v: schedule_doc(step=v), 0, -1, "violation.step"),
    ("seed < 2^63", lambda v: schedule_doc(seed=v), 2**63 - 1, 2**63, "seed"),
    ("seed >= -2^63", lambda v: schedule_doc(seed=v), -(2**63), -(2**63) - 1, "seed"),
    ("defer_timeout <= 1e12", lambda v: schedule_doc(defer=v), 1e12, math.nextafter(1e12, math.inf), "defer_timeout"),
    ("defer_timeout >= 0", lambda v: schedule_doc(defer=v), 0.0, -5e-324, "defer_timeout"),
]


@pytest.mark.parametrize("bound, build, accepted, refused, message", SCHEDULE, ids=[row[0] for row in SCHEDULE])
def test_schedule_replay_bounds(tmp_path, bound, build, accepted, refused, message):
    def load(value):
        path = tmp_path / "replay.json"
        path.write_text(json.dumps(build(value)))
        load_schedule(path)

    both_sides(load, accepted, refused, InputError, message)


def cache_doc(capacity) -> dict:
    return {"format": "subsum-cache-replay", "version": 1, "policy": "lru", "capacity": capacity, "operations": []}


CACHE = [("capacity <= 1,000,000", 1_000_000, 1_000_001), ("capacity >= 1", 1, 0), ("capacity is an integer", 1, 1.0)]


@pytest.mark.parametrize("bound, accepted, refused", CACHE, ids=[row[0] for row in CACHE])
def test_cache_replay_bounds(tmp_path, bound, accepted, refused):
    def load(value):
        path = tmp_path / "cache.json"
        path.write_text(json.dumps(cache_doc(value)))
        load_cache(path)

    both_sides(load, accepted, refused, InputError, "capacity")


# --- CLI ranges: each option's converter and callback, as click runs them before the command ----------------

def option(path: str, name: str) -> tuple[click.Context, click.Parameter]:
    """The click option `name` of the command `path` ("fuzz reconfig"), with a context to convert values in."""
    command: click.Command = main
    ctx = click.Context(main, info_name="subsum")
    for word in path.split():
        assert isinstance(command, click.Group)
        command = command.get_command(ctx, word)
        ctx = click.Context(command, parent=ctx, info_name=word)
    (param,) = [p for p in command.params if name in p.opts]
    return ctx, param


CLI = [  # (command, option, last accepted, first refused)
    ("", "--max-line-bytes", "1", "0"),
    ("", "--max-line-bytes", str(2**40), str(2**40 + 1)),
    ("fuzz reconfig", "--brokers", "10000", "10001"),
    ("fuzz reconfig", "--brokers", "1", "0"),
    ("fuzz reconfig", "--schedules", "1", "0"),
    ("fuzz reconfig", "--churn", "1", str(math.nextafter(1.0, 2.0))),
    ("explore", "--brokers", "8", "9"),
    ("explore", "--brokers", "1", "0"),
    ("explore", "--jobs", "64", "65"),
    ("verify", "--jobs", "256", "257"),
    ("verify", "--jobs", "1", "0"),
    ("verify", "--jobs", "2", "\u00b2"),  # a digit to str.isdigit, not to int()
    ("verify", "--budget-scale", "1000", str(math.nextafter(1000.0, 2000.0))),
    ("trace-check", "--grace", "1e9", str(math.nextafter(1e9, 2e9))),
    ("trace-check", "--grace", "0", "-5e-324"),
    ("bench matching", "--groups", "5", "6"),
    ("bench matching", "--groups", "1", "0"),
]


@pytest.mark.parametrize("command, name, accepted, refused", CLI, ids=[f"{c or 'subsum'} {n} {a}" for c, n, a, _ in CLI])
def test_cli_ranges(command, name, accepted, refused):
    ctx, param = option(command, name) if command else (click.Context(main, info_name="subsum"),
                                                        next(p for p in main.params if name in p.opts))
    both_sides(lambda v: param.process_value(ctx, v), accepted, refused, (click.BadParameter, SubsumError))  # both exit 2


# --- limits --------------------------------------------------------------------------------------------------

LAYOUTS = {  # where the long line sits decides which of read_input's three checks sees it
    "a first line": (lambda line: line + b"\n", 1),
    "a line between two others": (lambda line: b"a\n" + line + b"\nb\n", 2),
    "a last line without its newline": (lambda line: b"a\n" + line, 2),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_line_of_the_limit_is_read_and_one_byte_more_is_refused(tmp_path, layout):
    wrap, number = LAYOUTS[layout]

    def read(length):
        path = tmp_path / "in.jsonl"
        path.write_bytes(wrap(b"x" * length))
        read_input(path, limit=16)

    both_sides(read, 16, 17, InputError, f"in.jsonl:{number}: the line is longer than 16 bytes")


def test_the_line_limit_is_at_least_one_byte():
    try:
        both_sides(set_max_line_bytes, 1, 0, ValueError, "at least 1 byte")
    finally:
        set_max_line_bytes(DEFAULT_MAX_LINE_BYTES)


LIMITS = [
    ("int <= 2^63 - 1", lambda v: check_value("int", v), 2**63 - 1, 2**63, InvalidValue, "64-bit range"),
    ("int >= -2^63", lambda v: check_value("int", v), -(2**63), -(2**63) - 1, InvalidValue, "64-bit range"),
    ("scope brokers <= 8", lambda v: Scope("strawman", v, 0), 8, 9, SubsumError, "1 to 8 brokers"),
    ("scope brokers >= 1", lambda v: Scope("strawman", v, 0), 1, 0, SubsumError, "1 to 8 brokers"),
    ("scope subscriptions <= 3 per broker", lambda v: Scope("strawman", 2, v), 6, 7, SubsumError, "hold 0 to 6"),
    ("scope subscriptions >= 0", lambda v: Scope("strawman", 2, v), 0, -1, SubsumError, "hold 0 to 6"),
    ("scope swaps need 3 brokers", lambda v: Scope("timed", v, 1, swaps=1), 3, 2, SubsumError, "3 brokers or more"),
    ("scope overruns >= 0", lambda v: Scope("strawman", 2, 1, overruns=v), 0, -1, SubsumError, "must be >= 0"),
]


@pytest.mark.parametrize("bound, check, accepted, refused, error, message", LIMITS, ids=[row[0] for row in LIMITS])
def test_limits(bound, check, accepted, refused, error, message):
    both_sides(check, accepted, refused, error, message)


def test_a_cache_replay_time_beyond_the_largest_float_is_bad_input(tmp_path):
    """An integer time of 400 digits is valid JSON and too large for a float: refused by name, not an OverflowError."""
    def load(time):
        path = tmp_path / "cache.json"
        path.write_text(json.dumps({**cache_doc(2), "operations": [{"time": time, "op": "insert", "message": "m"}]}))
        load_cache(path)

    both_sides(load, 10**300, 10**400, InputError, "must be a finite number >= 0")
