"""The hostile-input corpus (issue 21): every command that reads a file or an
option, fed what an attacker or a careless user would feed it.

Every case is generated here; no large file is stored. A case names the
command line, the files it needs (made in a fresh folder), the exit status
it must give and the words its one `error:` line must hold (the file, the
line, the field). The runner also checks that nothing was printed on
standard output, that no traceback or control character reached the
terminal, that a sentinel output file was left untouched, and that no other
file appeared.

    python tests/hostile/corpus.py list              # the case IDs
    python tests/hostile/corpus.py run [--shard i/n] [--spark yes|no] [ID ...]   # one JSON line per case

`tests/test_hostile.py` runs every case in worker processes with a memory
limit and a time limit per case.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Callable, Iterator

import attrs

SENTINEL = b"SENTINEL: an earlier output that bad input must not touch\n"

#: A case expects one error line on standard error: no progress line, however slowly a loaded machine runs it.
os.environ["SUBSUM_PROGRESS_SECONDS"] = "1000000"


@attrs.frozen
class Case:
    id: str
    argv: tuple[str, ...]  # "{d}" stands for the case's folder
    files: tuple[tuple[str, bytes], ...] = ()
    exit: int = 2
    mentions: tuple[str, ...] = ()  # substrings of the error line ("{d}" allowed)
    output: str | None = None  # the option that names the command's output: a sentinel goes there
    fifos: tuple[str, ...] = ()
    seconds: float = 20.0
    #: valid input (exit 0): standard output must equal that of the same command with `--engine` set to
    #: this engine and no `--plan` (the kernel plan's cases: DEF-PIPE-4 against the in-process engines)
    agrees_with: str | None = None

    @property
    def spark(self) -> bool:
        """Runs a JVM: the runner gives these a worker of their own, with no address-space limit."""
        return "spark" in self.argv or "trace-check" in self.argv and not self.id.startswith("option/")  # options precede it


# --- valid inputs, to pair with one bad input -------------------------------------------

SUBS = b'{"id": "s1", "filter": "x > 1 and name prefix \\"ab\\""}\n{"id": "s2", "filter": "x = 5"}\n'
EVENTS = b'{"id": "e1", "attributes": {"x": 3, "name": "abc"}}\n{"id": "e2", "attributes": {"x": 5}}\n'
OPS = b'{"op": "insert", "message": "m1", "time": 0}\n{"op": "insert", "message": "m2", "time": 1}\n'
EDGES = b"0 1\n1 2\n1 3\n"
TRACE = (b'{"time": 0.0, "kind": "link", "a": 0, "b": 1, "up": true}\n'
         b'{"time": 0.0, "kind": "subscribe", "client": 1000000, "broker": 1, "filter": "x > 1"}\n')


def summary_doc() -> dict:
    return {"format": "subsum-summary", "version": 1, "layout": {"brokers": 2, "max_subscriptions": 2, "attributes": 1},
            "schema": [{"name": "x", "type": "int"}], "virtual": "none", "merged_brokers": [0], "unconditional": [],
            "names": {"1": "s1"}, "attributes": [{"name": "x", "type": "int", "ranges": [{"lo": 1, "hi": None, "ids": [1]}],
                                                  "equalities": []}]}


def replay_doc() -> dict:
    return {"format": "subsum-replay", "version": 1, "protocol": "strawman", "defer_timeout": 3000.0, "sub_timeout": 5000.0,
            "seed": 1, "topology": {"kind": "path", "brokers": 3, "links": [[0, 1], [1, 2]], "clients": [1, 0, 1]},
            "schedule": [{"op": "subscribe", "client": 1000000, "filter": "x > 1"}, {"op": "quiesce"},
                         {"op": "publish", "client": 1000001, "attributes": {"x": 3}}],
            "violation": {"claim": "CLM-NET-1", "message": "m", "step": 1}}


def other_broker_summary() -> dict:
    """A summary of broker 1 in the same layout: its IDs carry c1 = 1."""
    doc = summary_doc()
    doc.update(merged_brokers=[1], names={"5": "t1"})
    doc["attributes"][0]["ranges"] = [{"lo": None, "hi": 0, "ids": [5]}]
    return doc


def cs_replay_doc() -> dict:
    return {"format": "subsum-client-server-replay", "version": 1, "brokers": 3, "links": [[0, 1], [1, 2]],
            "servers": {"m1": 2}, "policy": "server", "cache_policy": "lru", "capacity": 2, "requests": [[0, "m1"]]}


def js(doc: object) -> bytes:
    return json.dumps(doc).encode()


# --- the readers: (name, argv with {f} for the file under attack, valid content, output option) ----

READERS: list[tuple[str, tuple[str, ...], bytes, str | None]] = [
    ("match-subs", ("match", "--subscriptions", "{f}", "--events", "{d}/ok-events.jsonl"), SUBS, "--output"),
    ("match-events", ("match", "--subscriptions", "{d}/ok-subs.jsonl", "--events", "{f}"), EVENTS, "--output"),
    ("match-events-brute", ("match", "--engine", "brute", "--subscriptions", "{d}/ok-subs.jsonl", "--events", "{f}"), EVENTS, "--output"),
    ("build-subs", ("summary", "build", "--subscriptions", "{f}"), SUBS, "--output"),
    ("smatch-summary", ("summary", "match", "--summary", "{f}", "--events", "{d}/ok-events.jsonl"), js(summary_doc()), "--output"),
    ("smatch-events", ("summary", "match", "--summary", "{d}/ok-summary.json", "--events", "{f}"), EVENTS, "--output"),
    ("smatch-subs", ("summary", "match", "--summary", "{d}/ok-summary.json", "--events", "{d}/ok-events.jsonl",
                     "--subscriptions", "{f}"), SUBS, "--output"),
    ("stats-summary", ("summary", "stats", "--summary", "{f}"), js(summary_doc()), None),
    ("merge-summary", ("summary", "merge", "{d}/ok-summary.json", "{f}"), js(other_broker_summary()), "--output"),
    ("plan-topology", ("summary", "plan", "--topology", "{f}"), EDGES, None),
    ("simulate-topology", ("simulate", "forwarding", "--topology", "{f}", "--events", "3"), EDGES, "--trace"),
    ("fuzz-topology", ("fuzz", "reconfig", "--topology", "{f}", "--schedules", "1", "--out-dir", "{d}/replays"), EDGES, None),
    ("cache-replay", ("cache", "replay", "{f}", "--policy", "lru", "--capacity", "2"), OPS, None),
    ("replay", ("replay", "{f}"), js(replay_doc()), None),
    ("replay-cs", ("replay", "{f}"), js(cs_replay_doc()), None),
    ("spark-events", ("match", "--engine", "spark", "--subscriptions", "{d}/ok-subs.jsonl", "--events", "{f}"), EVENTS, "--output"),
    ("spark-subs", ("match", "--engine", "spark", "--subscriptions", "{f}", "--events", "{d}/ok-events.jsonl"), SUBS, "--output"),
    ("trace-check", ("trace-check", "{f}", "--grace", "0.05"), TRACE, None),
]

VALID = {"ok-events.jsonl": EVENTS, "ok-subs.jsonl": SUBS, "ok-summary.json": js(summary_doc())}

DEEP = b"[" * 100_000 + b"]" * 100_000
ESC = b"\x1b]0;pwned\x07\x1b[2J"

#: Attacks on any file: (name, content or None for "no such file", words the error must hold).
FILE_ATTACKS: list[tuple[str, bytes | None, tuple[str, ...]]] = [
    ("missing", None, ("{f}",)),
    ("empty", b"", ("{f}",)),
    ("blank-lines", b"\n  \n\t\n", ("{f}",)),
    ("not-utf8", b"\xff\xfe\xfa garbage\n", ("{f}",)),
    ("utf16-bom", "{}\n".encode("utf-16"), ("{f}",)),
    ("nul-bytes", b"\x00" * 64 + b"\n", ("{f}",)),
    ("binary", bytes(range(256)) * 8, ("{f}",)),
    ("deep-nesting", DEEP + b"\n", ("{f}",)),
    ("huge-integer", b'{"id": ' + b"9" * 5000 + b"}\n", ("{f}",)),
    ("nan-token", b'{"id": NaN}\n', ("{f}",)),
    ("infinity-token", b'{"id": -Infinity}\n', ("{f}",)),
    ("array-top", b"[1, 2, 3]\n", ("{f}",)),
    ("string-top", b'"hello"\n', ("{f}",)),
    ("null-top", b"null\n", ("{f}",)),
    ("number-top", b"42\n", ("{f}",)),
    ("escape-sequences", b'{"id": "\x1b[31mred", ' + ESC + b'\n', ("{f}",)),
    ("truncated", b'{"id": "s1", "fil', ("{f}",)),
    ("long-line", b'{"id": "' + b"a" * 3_000_000 + b'"}\n', ("{f}", "limit")),
    ("lone-surrogate-key", b'{"\\udc80": 1}\n', ("{f}",)),
    ("duplicate-keys", b'{"id": "a", "id": "b"}\n', ("{f}",)),
]


#: Attacks on JSON syntax, which an edge list (any words, two per line) does not have.
JSON_ONLY = {"huge-integer", "nan-token", "infinity-token", "array-top", "truncated", "lone-surrogate-key", "duplicate-keys",
             "deep-nesting"}


def _reader_cases() -> Iterator[Case]:
    for reader, argv, valid, output in READERS:
        for attack, content, mentions in FILE_ATTACKS:
            if "topology" in reader and attack in JSON_ONLY:
                continue
            files = dict(VALID)
            target = f"{reader}-{attack}.in"
            if content is not None:
                files[target] = content
            extra = ("--max-line-bytes", "1000000") if attack == "long-line" else ()
            yield Case(f"{reader}/{attack}", extra + _fill(argv, "{d}/" + target), tuple(files.items()),
                       mentions=tuple(m.replace("{f}", target) for m in mentions), output=output)
        files = dict(VALID)
        yield Case(f"{reader}/folder", _fill(argv, "{d}"), tuple(files.items()), mentions=("is a directory",), output=output)
        yield Case(f"{reader}/dev-zero", ("--max-line-bytes", "100000") + _fill(argv, "/dev/zero"), tuple(files.items()),
                   mentions=("/dev/zero:1", "limit"), output=output)
        yield Case(f"{reader}/valid", _fill(argv, "{d}/valid.in") + ((output, "{d}/valid.out") if output else ()),
                   tuple({**files, "valid.in": valid}.items()),
                   exit=-1, output=None)  # the control: the valid file is accepted (exit 0 or 1)


def _path_cases() -> Iterator[Case]:
    """Names Hadoop reads differently (a glob, a URI, a hidden file, a compressed
    file): every engine must give the in-process engines' one answer."""
    import gzip

    names = {"glob[1].jsonl": EVENTS, "colon:name.jsonl": EVENTS, "_underscore.jsonl": EVENTS, ".dot.jsonl": EVENTS,
             "star*.jsonl": EVENTS, "packed.jsonl.gz": gzip.compress(EVENTS, mtime=0)}
    for engine in ("vectorized", "spark"):
        for name, content in names.items():
            valid = not name.endswith(".gz")
            yield Case(f"path/{engine}/{name}", ("match", "--engine", engine, "--subscriptions", "{d}/ok-subs.jsonl",
                                                 "--events", "{d}/" + name),
                       tuple({**VALID, name: content}.items()), exit=-1 if valid else 2,
                       mentions=() if valid else (name, "not UTF-8"), output="--output")


def _trace_cases() -> Iterator[Case]:
    twice = TRACE + (b'{"time": 1, "kind": "publish", "event": 7, "client": 1000000, "broker": 1, "attributes": {"x": 5}}\n\n'
                     b'{"time": 2, "kind": "publish", "event": 7, "client": 1000000, "broker": 1, "attributes": {"x": 6}}\n')
    yield Case("trace-check/event-published-twice", ("trace-check", "{d}/t.jsonl", "--grace", "0.05"), (("t.jsonl", twice),),
               mentions=("t.jsonl:5", "field 'event'", "published twice (first on line 3)"))


def _spark_setting_cases() -> Iterator[Case]:
    spark = ("match", "--engine", "spark", "--subscriptions", "{d}/ok-subs.jsonl", "--events")
    for name, content in {"text.parquet": EVENTS, "empty.parquet": b"", "half.parquet": b"PAR1garbage"}.items():
        yield Case(f"spark/{name}", spark + ("{d}/" + name,), tuple({**VALID, name: content}.items()),
                   mentions=(name, "not a Parquet file"), output="--output")
    corrupt = b"PAR1" + b"\x00garbage" * 100 + b"PAR1"  # the magic is right, the footer is not: Spark's job fails
    yield Case("spark/corrupt.parquet", spark + ("{d}/corrupt.parquet",), tuple({**VALID, "corrupt.parquet": corrupt}.items()),
               mentions=("corrupt.parquet: cannot read as Parquet", "corrupted file", "FAILED_READ_FILE"), output="--output")
    for master in ("bogus://x", "local[0", "", "spark://", "local[*] --conf"):
        yield Case(f"spark/master={master or 'empty'}", spark + ("{d}/ok-events.jsonl", "--master", master),
                   tuple(VALID.items()), mentions=("--master",), output="--output")
    for conf in ("novalue", "=1", ""):
        yield Case(f"spark/conf={conf or 'empty'}", spark + ("{d}/ok-events.jsonl", "--conf", conf), tuple(VALID.items()),
                   mentions=("--conf",), output="--output")


KERNEL_SUBS = ('{"id": "s1", "filter": "x > 1"}\n{"id": "s2\\t\\u202e", "filter": "f = 0.0"}\n'
               '{"id": "s3", "filter": "name prefix \\"\\u00e9\\""}\n{"id": "s0", "constraints": []}\n'
               '{"id": "s4", "filter": "x = 2 and f > 1.5"}\n').encode()
#: Valid events the kernel plan must match as the in-process engines do: a float written as a 19-digit
#: integer (a line Spark's reader leaves to the driver, whose rows join by a union: no longer in input order), -0.0,
#: ids and names that need escaping, an event with no attribute, and enough events for several batches.
KERNEL_EVENTS = {
    "suspect-in-the-middle.jsonl": b"".join(
        b'{"id": "e%d", "attributes": {"x": %d, "f": {"type": "float", "value": -0.0}}}\n' % (i, i) for i in range(50))
    + b'{"id": "big", "attributes": {"x": 2, "f": {"type": "float", "value": 1000000000000000000}}}\n'
    + b"".join(b'{"id": "e%d", "attributes": {"x": %d}}\n' % (i, i) for i in range(50, 100)),
    "escapes.jsonl": '{"id": "\\u001b[2J\\t", "attributes": {"name": "\\u00e9t\\u00e9", "x": 2}}\n'
                     '{"id": "none", "attributes": {}}\n{"id": "\\u202e\\"q\\"", "attributes": {"name": "\\u00e9"}}\n'.encode(),
    "batches.jsonl": b"".join(b'{"id": "e%d", "attributes": {"x": %d, "name": "\\u00e9%d"}}\n' % (i, i % 7, i)
                              for i in range(10_050)),  # Spark's Arrow batches hold 10,000 rows
}


def _kernel_cases() -> Iterator[Case]:
    """The kernel plan (DEF-PIPE-4) on valid files Spark reads its own ways: the in-process engines' lines;
    on a bad file, the reader's one error (the plan runs after the inputs are read)."""
    kernel = ("match", "--engine", "spark", "--plan", "kernel", "--subscriptions", "{d}/kernel-subs.jsonl", "--events")
    for name, content in KERNEL_EVENTS.items():
        yield Case(f"kernel/{name}", kernel + ("{d}/" + name,), (("kernel-subs.jsonl", KERNEL_SUBS), (name, content)),
                   exit=-1, agrees_with="vectorized")
    yield Case("kernel/not-utf8", kernel + ("{d}/bad.jsonl",), (("kernel-subs.jsonl", KERNEL_SUBS), ("bad.jsonl", b"\xff\xfe{}\n")),
               mentions=("bad.jsonl:1",), output="--output")


def _fill(argv: tuple[str, ...], path: str) -> tuple[str, ...]:
    return tuple(path if a == "{f}" else a for a in argv)


#: Valid JSON, bad records: (kind, name, the bad line, what the error must name besides the line).
BAD_RECORDS = (
    ("subs-record", "id-surrogate", b'{"id": "\\ud800", "filter": "x > 1"}', "field 'id'"),
    ("subs-record", "id-number", b'{"id": 3, "filter": "x > 1"}', "field 'id'"),
    ("subs-record", "id-empty", b'{"id": "", "filter": "x > 1"}', "field 'id'"),
    ("subs-record", "filter-control-char", b'{"id": "a", "filter": "s = \\"a\\tb\\""}', "field 'filter'"),
    ("subs-record", "filter-escape-seq", b'{"id": "a", "filter": "s = \\"\\u001b[2J\\" and"}', "field 'filter'"),
    ("subs-record", "filter-deep-parens", b'{"id": "a", "filter": "' + b"(" * 5000 + b'x > 1' + b")" * 5000 + b'"}', "field 'filter'"),
    ("subs-record", "value-huge-int", b'{"id": "a", "constraints": [{"name": "x", "type": "int", "op": ">", "value": 18446744073709551616}]}', "field"),
    ("subs-record", "value-nan", b'{"id": "a", "constraints": [{"name": "x", "type": "float", "op": ">", "value": NaN}]}', "field"),
    ("subs-record", "name-surrogate", b'{"id": "a", "constraints": [{"name": "\\udfff", "type": "int", "op": ">", "value": 1}]}', "field"),
    ("subs-record", "type-list", b'{"id": "a", "constraints": [{"name": "x", "type": ["int"], "op": ">", "value": 1}]}', "field"),
    ("subs-record", "op-unknown", b'{"id": "a", "constraints": [{"name": "x", "type": "int", "op": "=>", "value": 1}]}', "field"),
    ("subs-record", "wildcard-two-stars", b'{"id": "a", "constraints": [{"name": "x", "type": "string", "op": "wildcard", "value": "a*b*"}]}', "field"),
    ("subs-record", "duplicate-id", b'{"id": "a", "filter": "x > 1"}\n{"id": "a", "filter": "x > 2"}', ":2"),
    ("subs-record", "unknown-key", b'{"id": "a", "filter": "x > 1", "extra": 1}', "field 'extra'"),
    ("event-record", "id-surrogate", b'{"id": "\\udbff", "attributes": {"x": 1}}', "field 'id'"),
    ("event-record", "attributes-list", b'{"id": "e", "attributes": [1]}', "field 'attributes'"),
    ("event-record", "value-object", b'{"id": "e", "attributes": {"x": {"a": 1}}}', "field"),
    ("event-record", "value-nan", b'{"id": "e", "attributes": {"x": NaN}}', "field"),
    ("event-record", "value-2to64", b'{"id": "e", "attributes": {"x": 18446744073709551616}}', "field"),
    ("event-record", "value-1e400", b'{"id": "e", "attributes": {"x": 1e400}}', "field"),
    ("event-record", "name-empty", b'{"id": "e", "attributes": {"": 1}}', "field"),
    ("event-record", "name-surrogate", b'{"id": "e", "attributes": {"\\ud800": 1}}', "field"),
    ("event-record", "value-surrogate", b'{"id": "e", "attributes": {"s": "\\ud800"}}', "field"),
    ("event-record", "value-escape-seq", b'{"id": "e", "attributes": {"s": "\\u001b]0;x\\u0007", "t": NaN}}', "field"),
)


def _bad_records() -> Iterator[Case]:
    """Valid JSON, bad records: the field must be named, with its line."""
    kinds = {"subs-record": (b"", "bad.jsonl:", ("--subscriptions", "{d}/bad.jsonl", "--events", "{d}/ok-events.jsonl")),
             "event-record": (EVENTS, "bad.jsonl:3", ("--subscriptions", "{d}/ok-subs.jsonl", "--events", "{d}/bad.jsonl"))}
    for kind, name, line, field in BAD_RECORDS:
        before, where, argv = kinds[kind]  # the bad line comes after `before` (two good lines of events)
        files = dict(VALID, **{"bad.jsonl": before + line + b"\n"})
        yield Case(f"{kind}/{name}", ("match", *argv), tuple(files.items()), mentions=(where, field), output="--output")


def _summary_cases() -> Iterator[Case]:
    def tampered(change: Callable[[dict], None]) -> bytes:
        doc = summary_doc()
        change(doc)
        return js(doc)

    def names(value: dict) -> Callable[[dict], None]:
        return lambda d: d.__setitem__("names", value)

    def setp(path: str, value: object) -> Callable[[dict], None]:
        def change(d: dict) -> None:
            keys = path.split(".")
            target = d
            for k in keys[:-1]:
                target = target[int(k)] if isinstance(target, list) else target[k]
            last = keys[-1]
            if isinstance(target, list):
                target[int(last)] = value
            else:
                target[last] = value
        return change

    changes: dict[str, tuple[Callable[[dict], None], str]] = {
        "names-leading-zero": (names({"01": "s1"}), "names"),
        "names-arabic-digit": (names({"\u0661": "s1"}), "names"),
        "names-superscript": (names({"\u00b9": "s1"}), "names"),
        "names-negative": (names({"-1": "s1"}), "names"),
        "names-plus": (names({"+1": "s1"}), "names"),
        "names-huge": (names({"9" * 400: "s1"}), "names"),
        "names-not-in-rows": (names({"3": "s3"}), "names"),
        "names-surrogate": (names({"1": "\ud800"}), "names"),
        "names-list": (names(["s1"]), "names"),  # type: ignore[arg-type]
        "version-true": (setp("version", True), "version"),
        "version-float": (setp("version", 1.0), "version"),
        "unconditional-false": (setp("unconditional", False), "unconditional"),
        "unconditional-string": (setp("unconditional", "1"), "unconditional"),
        "merged-brokers-true": (setp("merged_brokers", [True]), "merged_brokers"),
        "merged-brokers-missing": (lambda d: d.pop("merged_brokers"), "merged_brokers"),
        "brokers-2to32": (setp("layout.brokers", 2**32), "layout.brokers"),
        "brokers-2to64": (setp("layout.brokers", 2**64), "layout.brokers"),
        "attributes-2to20": (setp("layout.attributes", 2**20), "layout.attributes"),
        "max-subs-zero": (setp("layout.max_subscriptions", 0), "layout.max_subscriptions"),
        "type-list": (setp("attributes.0.type", ["int"]), "attributes[0]"),
        "type-unknown": (setp("attributes.0.type", "decimal"), "attributes[0]"),
        "schema-type-list": (setp("schema.0.type", ["int"]), "schema[0].type"),
        "bound-401-digits": (setp("attributes.0.ranges.0.lo", 10**400), "attributes[0].ranges[0].lo"),
        "bound-2to63": (setp("attributes.0.ranges.0.lo", 2**63), "attributes[0].ranges[0].lo"),
        "bound-string": (setp("attributes.0.ranges.0.lo", "1"), "attributes[0].ranges[0].lo"),
        "ids-empty": (setp("attributes.0.ranges.0.ids", []), "attributes[0].ranges[0].ids"),
        "ids-negative": (setp("attributes.0.ranges.0.ids", [-1]), "attributes[0].ranges[0].ids"),
        "ids-bool": (setp("attributes.0.ranges.0.ids", [True]), "attributes[0].ranges[0].ids"),
        "ids-other-broker": (setp("attributes.0.ranges.0.ids", [1 << 2]), "attributes[0].ranges[0].ids"),
        "ids-float": (setp("attributes.0.ranges.0.ids", [1.0]), "attributes[0].ranges[0].ids"),
        "format-other": (setp("format", "subsum-replay"), "format"),
        "virtual-list": (setp("virtual", ["none"]), "virtual"),
        "extra-field": (setp("extra", 1), "extra"),
        "attributes-object": (setp("attributes", {}), "attributes"),
        "layout-list": (setp("layout", []), "layout"),
    }
    for name, (change, field) in changes.items():
        try:
            content = tampered(change)
        except UnicodeEncodeError:
            content = tampered(change).decode("utf-8", "surrogatepass").encode()
        files = dict(VALID, **{"bad.json": content})
        yield Case(f"summary/{name}", ("summary", "stats", "--summary", "{d}/bad.json"), tuple(files.items()),
                   mentions=("bad.json", field))
        yield Case(f"summary-match/{name}", ("summary", "match", "--summary", "{d}/bad.json", "--events", "{d}/ok-events.jsonl"),
                   tuple(files.items()), mentions=("bad.json", field), output="--output")
    # A summary `summary build` writes for a string constraint of 70,000 bytes: stats measures it.
    long = summary_doc()
    long["schema"] = [{"name": "s", "type": "string"}]
    long["attributes"] = [{"name": "s", "type": "string", "rows": [{"op": "prefix", "value": "x" * 70_000, "ids": [1]}]}]
    yield Case("summary/long-string-is-valid", ("summary", "stats", "--summary", "{d}/long.json"), (("long.json", js(long)),), exit=0)
    # Two summaries both built as broker 0: merging them would lose a subscription.
    other = summary_doc()
    other["names"] = {"1": "t1"}
    other["attributes"][0]["ranges"] = [{"lo": None, "hi": 0, "ids": [1]}]
    files = dict(VALID, **{"b.json": js(other)})
    yield Case("summary-merge/same-broker", ("summary", "merge", "{d}/ok-summary.json", "{d}/b.json"), tuple(files.items()),
               mentions=("b.json", "broker"), output="--output")
    lax = summary_doc()
    lax.pop("merged_brokers")
    other.pop("merged_brokers")
    files = dict(VALID, **{"a.json": js(lax), "b.json": js(other)})
    yield Case("summary-merge/same-broker-unlisted", ("summary", "merge", "{d}/a.json", "{d}/b.json"), tuple(files.items()),
               mentions=("merged_brokers",), output="--output")


def _replay_cases() -> Iterator[Case]:
    def tampered(base: Callable[[], dict], change: Callable[[dict], None]) -> bytes:
        doc = base()
        change(doc)
        return js(doc)

    def setk(key: str, value: object) -> Callable[[dict], None]:
        return lambda d: d.__setitem__(key, value)

    fuzz_changes: dict[str, tuple[Callable[[dict], None], str]] = {
        "seed-true": (setk("seed", True), "seed"),
        "seed-float": (setk("seed", 1.5), "seed"),
        "defer-infinity": (setk("defer_timeout", float("inf")), "Infinity"),
        "defer-1e400": (setk("defer_timeout", 1e300), "defer_timeout"),
        "defer-negative": (setk("defer_timeout", -1), "defer_timeout"),
        "sub-nan": (setk("sub_timeout", float("nan")), "NaN"),
        "violation-list": (setk("violation", [1, 2]), "violation"),
        "violation-missing": (lambda d: d.pop("violation"), "violation"),
        "protocol-unknown": (setk("protocol", "paxos"), "protocol"),
        "protocol-list": (setk("protocol", ["strawman"]), "protocol"),
        "version-2": (setk("version", 2), "version"),
        "schedule-object": (setk("schedule", {}), "schedule"),
        "schedule-op-missing-client": (setk("schedule", [{"op": "subscribe", "filter": "x > 1"}]), "schedule[0]"),
        "schedule-op-unknown": (setk("schedule", [{"op": "explode"}]), "schedule[0]"),
        "schedule-op-number": (setk("schedule", [7]), "schedule[0]"),
        "schedule-bad-filter": (setk("schedule", [{"op": "subscribe", "client": 1000000, "filter": "x >"}]), "schedule[0]"),
        "schedule-client-unknown": (setk("schedule", [{"op": "subscribe", "client": 5, "filter": "x > 1"}]), "schedule[0]"),
        "schedule-broker-out-of-range": (setk("schedule", [{"op": "publish", "broker": 99, "event": {"x": 1}}]), "schedule[0]"),
        "schedule-huge": (setk("schedule", [{"op": "quiesce"}] * 200_000), "schedule"),
        "topology-list": (setk("topology", []), "topology"),
        "topology-links-cycle": (lambda d: d["topology"].__setitem__("links", [[0, 1], [1, 2], [2, 0]]), "topology"),
        "topology-links-self": (lambda d: d["topology"].__setitem__("links", [[0, 0], [1, 2]]), "topology"),
        "topology-brokers-huge": (lambda d: d["topology"].__setitem__("brokers", 10**8), "topology"),
        "topology-clients-huge": (lambda d: d["topology"].__setitem__("clients", {str(1000000 + i): 0 for i in range(200_001)}),
                                  "topology"),
        "topology-client-broker-bad": (lambda d: d["topology"].__setitem__("clients", {"1000000": 9}), "topology"),
        "extra-field": (setk("extra", 1), "extra"),
    }
    for name, (change, field) in fuzz_changes.items():
        files = dict(VALID, **{"bad.json": tampered(replay_doc, change)})
        yield Case(f"replay/{name}", ("replay", "{d}/bad.json"), tuple(files.items()), mentions=("bad.json", field))
    cs_changes: dict[str, tuple[Callable[[dict], None], str]] = {
        "brokers-huge": (setk("brokers", 10**8), "brokers"),
        "brokers-true": (setk("brokers", True), "brokers"),
        "links-cycle": (setk("links", [[0, 1], [1, 0]]), "links"),
        "servers-list": (setk("servers", [2]), "servers"),
        "capacity-zero": (setk("capacity", 0), "capacity"),
        "capacity-huge": (setk("capacity", 10**30), "capacity"),
        "requests-huge": (setk("requests", [[0, "m1"]] * 2_000_000), "requests"),
        "requests-unknown-message": (setk("requests", [[0, "m9"]]), "requests"),
        "policy-unknown": (setk("policy", "magic"), "policy"),
        "version-true": (setk("version", True), "version"),
    }
    for name, (change, field) in cs_changes.items():
        files = dict(VALID, **{"bad.json": tampered(cs_replay_doc, change)})
        yield Case(f"replay-cs/{name}", ("replay", "{d}/bad.json"), tuple(files.items()), mentions=("bad.json", field))


def _topology_cases() -> Iterator[Case]:
    edges = {
        "label-dashes": (b"--5 1\n1 2\n", None),
        "label-superscript": (b"\xc2\xb2 1\n1 2\n", None),
        "self-loop": (b"1 1\n", ":1"),
        "one-column": (b"1\n", ":1"),
        "no-edges": (b"# only a comment\n", None),
        "disconnected": (b"0 1\n2 3\n", None),
        "escape-label": (b"\x1b[2J 1\n", None),
        "million-nodes": (b"".join(b"0 %d\n" % i for i in range(1, 1_000_002)), None),
        "duplicate-edge": (b"0 1\n0 1\n", None),
    }
    for name, (content, where) in edges.items():
        files = dict(VALID, **{"g.edgelist": content})
        mentions = ("g.edgelist" + (where or ""),)
        if name in ("label-superscript", "duplicate-edge", "label-dashes"):
            continue  # valid: a label is any word; a repeated link is one link
        if name == "disconnected":  # a simulation needs a connected overlay, unless it is asked to run on a forest
            mentions = ("g.edgelist: the links form 2 components, {0 1} (2 brokers), {2 3} (2 brokers)", "--forest")
        yield Case(f"topology/{name}", ("simulate", "forwarding", "--topology", "{d}/g.edgelist", "--events", "3"), tuple(files.items()),
                   mentions=mentions, output="--trace", seconds=60.0)
        if name == "disconnected":
            yield Case("topology/disconnected-as-a-forest", ("simulate", "forwarding", "--forest", "--topology", "{d}/g.edgelist",
                                                               "--events", "3"), tuple(files.items()), exit=0, seconds=60.0)
            continue
        yield Case(f"plan-topology/{name}", ("summary", "plan", "--topology", "{d}/g.edgelist"), tuple(files.items()),
                   mentions=mentions, seconds=60.0)
    for name in ("label-superscript", "duplicate-edge", "disconnected", "label-dashes"):
        content = edges[name][0]
        yield Case(f"topology/{name}-is-valid", ("summary", "plan", "--topology", "{d}/g.edgelist"),
                   (("g.edgelist", content),), exit=0)


def _option_cases() -> Iterator[Case]:
    floats = {
        "simulate --gap": ("simulate", "forwarding", "--events", "3", "--gap"),
        "simulate --defer-timeout": ("simulate", "forwarding", "--events", "3", "--defer-timeout"),
        "simulate --sub-timeout": ("simulate", "forwarding", "--events", "3", "--sub-timeout"),
        "simulate --period": ("simulate", "summaries", "--events", "3", "--period"),
        "simulate --lambda": ("simulate", "client-server", "--request-policy", "server", "--lambda"),
        "simulate --mu": ("simulate", "client-server", "--request-policy", "server", "--mu"),
        "simulate --zipf": ("simulate", "caching", "--placement", "leaf", "--zipf"),
        "fuzz --budget": ("fuzz", "reconfig", "--out-dir", "{d}/r", "--budget"),
        "fuzz --churn": ("fuzz", "reconfig", "--out-dir", "{d}/r", "--schedules", "1", "--churn"),
        "fuzz --defer-timeout": ("fuzz", "reconfig", "--out-dir", "{d}/r", "--schedules", "1", "--defer-timeout"),
        "trace-check --grace": ("trace-check", "{d}/t.jsonl", "--grace"),
        "trace-check --window": ("trace-check", "{d}/t.jsonl", "--grace", "0.1", "--window"),
        "verify --budget-scale": ("verify", "--claim", "CLM-DATA-1", "--budget-scale"),
        "bench network --fuzz-budget": ("bench", "network", "--out-dir", "{d}/b", "--fuzz-budget"),
    }
    values = ("nan", "inf", "-inf", "1e309", "-1", "abc", "")
    for name, argv in floats.items():
        for v in values:
            if v == "-1" and "--gap" not in name and "budget" not in name and "--window" not in name:
                continue
            yield Case(f"option/{name.replace(' ', '')}={v or 'empty'}", argv + (v,), (("t.jsonl", TRACE),),
                       mentions=(argv[-1],))
    misc = {
        "verify--claim=NOPE": ("verify", "--claim", "CLM-NOPE-1"),
        "verify--claim=escape": ("verify", "--claim", "\x1b[2J"),
        "verify--profile=fast": ("verify", "--profile", "fast"),
        "verify--jobs=0": ("verify", "--claim", "CLM-DATA-1", "--jobs", "0"),
        "verify--jobs=1.5": ("verify", "--claim", "CLM-DATA-1", "--jobs", "1.5"),
        "verify--jobs=escape": ("verify", "--claim", "CLM-DATA-1", "--jobs", "\x1b[2J"),
        "claims--format=xml": ("claims", "--format", "xml"),
        "prove--format=xml": ("prove", "--format", "xml"),
        "bench-matching--groups=9": ("bench", "matching", "--out-dir", "{d}/b", "--groups", "9"),
        "bench-matching--groups=escape": ("bench", "matching", "--out-dir", "{d}/b", "--groups", "\x1b"),
        "bench-matching--repeat=0": ("bench", "matching", "--out-dir", "{d}/b", "--repeat", "0"),
        "bench-matching--planted-rate=nan": ("bench", "matching", "--out-dir", "{d}/b", "--planted-rate", "nan"),
        "bench-matching--budget=inf": ("bench", "matching", "--out-dir", "{d}/b", "--budget", "inf"),
        "bench-summaries--subscriptions=0": ("bench", "summaries", "--out-dir", "{d}/b", "--subscriptions", "0"),
        "bench-reconfig--defer-timeout=nan": ("bench", "reconfig", "--out-dir", "{d}/b", "--defer-timeout", "nan"),
        "bench-spark--max-events=5": ("bench", "spark", "--out-dir", "{d}/b", "--max-events", "5"),
        "bench-network--brokers=0": ("bench", "network", "--out-dir", "{d}/b", "--brokers", "0"),
        "bench--out-dir=file": ("bench", "network", "--out-dir", "{d}/ok-subs.jsonl"),
        "simulate=nope": ("simulate", "nope"),
        "simulate--protocol=nope": ("simulate", "forwarding", "--protocol", "nope"),
        "simulate--topology=nope": ("simulate", "forwarding", "--topology", "nope"),
        "fuzz--protocol=flooding": ("fuzz", "reconfig", "--protocol", "flooding", "--out-dir", "{d}/r"),
        "fuzz--out-dir=file": ("fuzz", "reconfig", "--schedules", "1", "--out-dir", "{d}/ok-subs.jsonl"),
        "max-line-bytes=0": ("--max-line-bytes", "0", "claims"),
        "max-line-bytes=nan": ("--max-line-bytes", "nan", "claims"),
        "unknown-command": ("teleport",),
        "unknown-option": ("match", "--frobnicate"),
    }
    for name, argv in misc.items():
        yield Case(f"option/{name}", argv, tuple(VALID.items()), mentions=("",))
    yield Case("option/trace-check--window=5e-324", ("trace-check", "{d}/t.jsonl", "--grace", "0.1", "--window", "5e-324"),
               (("t.jsonl", TRACE),), mentions=("--window",))
    ints = {
        "simulate --brokers": ("simulate", "forwarding", "--brokers"),
        "simulate --events": ("simulate", "forwarding", "--events"),
        "simulate --seed": ("simulate", "forwarding", "--events", "3", "--seed"),
        "summary build --brokers": ("summary", "build", "--subscriptions", "{d}/ok-subs.jsonl", "--brokers"),
        "summary build --broker": ("summary", "build", "--subscriptions", "{d}/ok-subs.jsonl", "--broker"),
        "cache replay --capacity": ("cache", "replay", "{d}/ops.jsonl", "--policy", "lru", "--capacity"),
        "fuzz --steps": ("fuzz", "reconfig", "--out-dir", "{d}/r", "--steps"),
    }
    for name, argv in ints.items():
        for v in ("-5", "1e3", "99999999999999999999999999", "0x10", "nan"):
            valid = (name == "simulate --seed" and v in ("-5", "99999999999999999999999999")) or (
                name == "cache replay --capacity" and v == "99999999999999999999999999")  # any seed; a cache larger than needed
            yield Case(f"option/{name.replace(' ', '')}={v}", argv + (v,), (("ok-subs.jsonl", SUBS), ("ops.jsonl", OPS)),
                       exit=-1 if valid else 2, mentions=(argv[-1],))
    # Output paths: each refused before any work, the sentinel untouched.
    outputs = {
        "match --output": (("match", "--subscriptions", "{d}/ok-subs.jsonl", "--events", "{d}/ok-events.jsonl"), "--output"),
        "summary build --output": (("summary", "build", "--subscriptions", "{d}/ok-subs.jsonl"), "--output"),
        "simulate --trace": (("simulate", "forwarding", "--events", "3"), "--trace"),
        "verify --junit": (("verify", "--claim", "CLM-DATA-1"), "--junit"),
        "verify --html": (("verify", "--claim", "CLM-DATA-1"), "--html"),
        "summary merge --output": (("summary", "merge", "{d}/ok-summary.json"), "--output"),
    }
    for name, (argv, option) in outputs.items():
        key = name.replace(" ", "")
        yield Case(f"output/{key}/missing-folder", argv + (option, "{d}/no/such/folder/out"), tuple(VALID.items()),
                   mentions=("no/such/folder",))
        yield Case(f"output/{key}/is-folder", argv + (option, "{d}"), tuple(VALID.items()), mentions=("is a directory",))
        yield Case(f"output/{key}/fifo", argv + (option, "{d}/fifo"), tuple(VALID.items()), fifos=("fifo",),
                   mentions=("fifo", "regular file"))
        yield Case(f"output/{key}/dev-null", argv + (option, "/dev/null"), tuple(VALID.items()),
                   mentions=("/dev/null", "regular file"))
        yield Case(f"output/{key}/same-as-input", argv + (option, "{d}/ok-subs.jsonl"), tuple(VALID.items()),
                   exit=2 if "subs" in " ".join(argv) else -1, mentions=("same file",) if "subs" in " ".join(argv) else ())


def _engine_cases() -> Iterator[Case]:
    """Valid input that used to exhaust memory or time: each must finish in bounds."""
    import random

    rnd = random.Random(7)  # a value with no period, as in issue 21: the substring set held every one of them
    value = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(200_000)).encode()
    long_contains = (b'{"id": "s", "constraints": [{"name": "t", "type": "string", "op": "contains", "value": "'
                     + value[50_000:150_000] + b'"}]}\n')
    long_value = b'{"id": "e", "attributes": {"t": "' + value + b'"}}\n'
    for engine in ("vectorized", "indexed", "rab", "counting", "brute"):
        yield Case(f"engine/{engine}/long-contains", ("match", "--engine", engine, "--subscriptions", "{d}/s.jsonl",
                                                      "--events", "{d}/e.jsonl", "--output", "{d}/out.jsonl"),
                   (("s.jsonl", long_contains), ("e.jsonl", long_value)), exit=0, seconds=60.0)
    many = b'{"id": "s", "constraints": [' + b", ".join(
        b'{"name": "x%d", "type": "int", "op": ">", "value": %d}' % (i, i) for i in range(100_000)) + b"]}\n"
    yield Case("engine/model/100k-constraints", ("match", "--engine", "model", "--subscriptions", "{d}/s.jsonl", "--events",
                                                  "{d}/ok-events.jsonl", "--output", "{d}/out.jsonl"),
               (("s.jsonl", many), *VALID.items()), exit=0, seconds=60.0)
    yield Case("simulate/star-100000", ("simulate", "forwarding", "--topology", "star", "--brokers", "100000", "--events", "1",
                                        "--subscriptions", "2"), exit=0, seconds=60.0)
    # the budget holds inside a schedule; no schedule finished, so nothing was checked: exit 3, not a vacuous pass
    yield Case("fuzz/budget-inside-a-schedule", ("fuzz", "reconfig", "--brokers", "2000", "--budget", "2", "--out-dir", "{d}/r"),
               exit=3, mentions=("no schedule finished within the budget",), seconds=30.0)


def _filter_cases() -> Iterator[Case]:
    texts = {
        "tab-in-string": 's = "a\tb"',
        "newline-multiline": 'x > 1 and\ny >',
        "escape-seq": 'x = "\x1b[2J"',
        "empty": "",
        "deep-parens": "(" * 10_000 + "x > 1" + ")" * 10_000,
        "long": "x > 1 and " * 20_000 + "x >",
        "nul": "x = \x00",
        "bidi": 'x = "\u202e"' + " and",
        "huge-int": "x > " + "9" * 5000,
    }
    for name, text in texts.items():
        yield Case(f"check-filter/{name}", ("check-filter", text), mentions=("",))


def cases() -> list[Case]:
    out = [*_reader_cases(), *_path_cases(), *_trace_cases(), *_spark_setting_cases(), *_kernel_cases(), *_bad_records(), *_summary_cases(), *_replay_cases(),
           *_topology_cases(), *_option_cases(),
           *_engine_cases(), *_filter_cases()]
    ids = [c.id for c in out]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    return out


# --- running one case ---------------------------------------------------------------------

CONTROL = {chr(c) for c in range(32) if c not in (9,)} | {"\x7f"} | {chr(c) for c in range(0x80, 0xA0)}


def run_case(case: Case, folder: Path) -> dict:
    """Run one case in this process (click's test runner); the verdict and why."""
    import signal
    import time

    from click.testing import CliRunner

    from subsum.cli import main

    folder.mkdir(parents=True, exist_ok=True)
    for name, content in case.files:
        (folder / name).write_bytes(content)
    for name in case.fifos:
        os.mkfifo(folder / name)
    argv = [a.replace("{d}", str(folder)) for a in case.argv]
    sentinel = folder / "sentinel.out"
    if case.output:
        sentinel.write_bytes(SENTINEL)
        argv += [case.output, str(sentinel)]
    before = sorted(p.name for p in folder.iterdir())

    # A JVM's jobs slow down most when other tests share the machine (make test runs them in parallel):
    # Spark cases get three times the limit. An alarm inside a py4j call breaks the session for the cases after it.
    seconds = case.seconds * (3 if case.spark else 1)

    def alarm(_signum, _frame):
        raise TimeoutError(f"ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.perf_counter()
    try:
        result = CliRunner().invoke(main, argv, catch_exceptions=True)
        code, stdout, stderr, exc = result.exit_code, result.stdout, result.stderr, result.exception
    except TimeoutError as error:
        code, stdout, stderr, exc = None, "", "", error
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    seconds = time.perf_counter() - started
    problems = []
    if code is None:
        problems.append(f"hung: {exc}")
    elif case.exit == -1:
        if code not in (0, 1):
            problems.append(f"exit {code}, expected 0 or 1 (valid input)")
    elif code != case.exit:
        problems.append(f"exit {code}, expected {case.exit}")
    if case.agrees_with and code is not None:
        plan_at = argv.index("--plan")
        reference = argv[:plan_at] + argv[plan_at + 2:]
        reference[reference.index("--engine") + 1] = case.agrees_with
        want = CliRunner().invoke(main, reference, catch_exceptions=True)
        if code != 0 or want.exit_code != 0 or stdout != want.stdout:
            problems.append(f"exit {code}, {len(stdout.splitlines())} lines; {case.agrees_with}: exit {want.exit_code}, "
                            f"{len(want.stdout.splitlines())} lines; first difference: "
                            f"{next((a, b) for a, b in zip(stdout.splitlines() + [''], want.stdout.splitlines() + ['']) if a != b)!r:.300}"
                            if stdout != want.stdout else f"exit {code}, {case.agrees_with}: exit {want.exit_code}")
    if isinstance(exc, BaseException) and not isinstance(exc, (SystemExit, TimeoutError)):
        problems.append(f"exception escaped: {type(exc).__name__}: {str(exc)[:200]}")
    if "Traceback" in stderr or "Traceback" in stdout:
        problems.append("a traceback was printed")
    if case.exit == 2 and code is not None:
        lines = [line for line in stderr.splitlines() if line.strip()]
        context = lines[1:]  # a filter's text and a caret under the column may follow, indented
        if not lines or not lines[0].startswith("error: ") or not all(line.startswith("  ") for line in context):
            problems.append(f"expected one 'error:' line, got {len(lines)} line(s): {stderr[:300]!r}")
        if any(ch in CONTROL for line in context for ch in line):
            problems.append(f"a control character reached the terminal: {context!r}")
        message = lines[0] if lines else ""
        for word in case.mentions:
            word = word.replace("{d}", str(folder))
            if word not in message:
                problems.append(f"the error does not mention {word!r}: {message[:300]!r}")
        if any(ch in CONTROL for ch in message):
            problems.append(f"a control character reached the terminal: {message[:300]!r}")
        if stdout:
            problems.append(f"partial output on stdout: {stdout[:200]!r}")
    if case.output and case.exit == 2 and sentinel.read_bytes() != SENTINEL:
        problems.append("the sentinel output was changed")
    if case.exit == 2:
        after = sorted(p.name for p in folder.iterdir())
        new = [n for n in after if n not in before and n != "r"]
        if new:
            problems.append(f"files appeared: {new}")
    return {"id": case.id, "ok": not problems, "exit": code, "seconds": round(seconds, 3), "problems": problems,
            "stderr": stderr[-500:]}


def chosen_cases(all_cases: list[Case], args: list[str]) -> list[Case]:
    """The cases `[--shard i/n] [--spark yes|no] [ID ...]` selects."""
    rest = list(args)
    shard = spark = None
    while rest[:1] in (["--shard"], ["--spark"]):
        if rest[0] == "--shard":
            i, n = map(int, rest[1].split("/"))
            shard = (i, n)
        else:
            spark = rest[1] == "yes"
        rest = rest[2:]
    chosen = [c for c in all_cases if (not rest or c.id in rest) and (spark is None or c.spark == spark)]
    return chosen[shard[0]::shard[1]] if shard else chosen


def serve(argv: list[str], usage: str, chosen: list, prefix: str, prepare: Callable[[], None], run_one: Callable[..., dict]) -> int:
    """`SCRIPT list`: the chosen cases' IDs; `SCRIPT run`: each case run in a folder of its own under a temporary
    root (after `prepare`), a JSON line {"start": id} before it and its verdict after it, so that the test reading
    them knows which case a dying worker was running."""
    import shutil
    import tempfile

    assert argv[:1] in ([], ["list"], ["run"]), usage
    if not argv or argv[0] == "list":
        for case in chosen:
            print(case.id)
        return 0
    root = Path(tempfile.mkdtemp(prefix=prefix))
    prepare()
    for k, case in enumerate(chosen):
        print(json.dumps({"start": case.id}), flush=True)
        print(json.dumps(run_one(case, root / f"case{k}")), flush=True)
    shutil.rmtree(root, ignore_errors=True)
    return 0


def start_spark(chosen: list[Case]) -> None:
    """Start the JVM once, outside every case's time limit, when a chosen case needs it."""
    if any(case.spark for case in chosen):
        from subsum.impl.spark.session import get_session

        # Tuned for small inputs, as `subsum match --engine spark` tunes a fresh process for each case's few bytes
        # (session_for's quick start): the C1 compiler alone halves the shard's time on two busy cores (issue 51).
        get_session(None, quick_start=True)


def main(argv: list[str]) -> int:
    chosen = chosen_cases(cases(), argv[1:])
    return serve(argv, "usage: corpus.py list | run [--shard i/n] [--spark yes|no] [ID ...]", chosen, "hostile-",
                 lambda: start_spark(chosen), run_case)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
