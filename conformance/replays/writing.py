"""Each replay written into its folder, atomically (spec/formats.md,
"Replays"): a file is written beside its name and renamed into place, a
directory is filled under a temporary name and renamed into place, so a
replay is whole or absent. Names are derived from the content (a digest),
so the same failure found twice is one replay.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Mapping

import attrs

from subsum.conformance.replays import documents
from subsum.conformance.replays.documents import CACHE, CASE_FILE, CLIENT_SERVER, MATCHING, SCHEDULE
from subsum.core.errors import InputError, SubsumError
from subsum.core.outputs import write_lines_atomically


def safe_name(name: str) -> str:
    """A name as part of a file name: characters other than letters, digits, `_`, `.` and `-` become `_`."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


class ReplayNotSaved(SubsumError):
    """A finding whose replay could not be written: the finding stands (exit
    1), and the replay is printed in full under the error line (`context`),
    so that nothing found is lost."""

    exit_code = 1

    def __init__(self, path: Path, doc: Mapping[str, Any], why: str, found: str = "a violation") -> None:
        self.path, self.doc, self.why = path, doc, why
        super().__init__(f"found {found} but cannot write its replay {path}: {why}; the replay follows on standard error")
        self.context = tuple(json.dumps(doc, indent=1, ensure_ascii=False).splitlines())


def _write(folder: Path | None, name: str, doc: Mapping[str, Any]) -> Path:
    folder = documents.FUZZ_FOLDER if folder is None else folder
    path = folder / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_lines_atomically(path, [json.dumps(doc, indent=1, ensure_ascii=False)])
    except OSError as exc:
        raise ReplayNotSaved(path, doc, exc.strerror or str(exc)) from None
    except InputError as exc:
        raise ReplayNotSaved(path, doc, exc.message) from None
    return path


@attrs.frozen
class ScheduleReplay:
    """What a schedule replay holds (format SCHEDULE): the run's protocol,
    network, seed and timeouts, the schedule and its violation; `shrunk_from`
    is the schedule's length as found, when shrinking shortened it; `command`
    an external broker's; `delay` the links' delay range when it is not the
    default; `not_checked` what a `conform broker` run did not check (DEF-PLUG-7)."""

    protocol: str
    topology: dict
    seed: int
    schedule: list
    violation: Mapping[str, Any]
    defer_timeout: float
    sub_timeout: float
    shrunk_from: int | None = None
    command: str | None = None
    delay: tuple[float, float] | None = None
    not_checked: Mapping[str, Any] | None = None

    def document(self) -> dict[str, Any]:
        """The replay file's JSON, the optional fields only when they say something."""
        doc: dict[str, Any] = {"format": SCHEDULE, "version": 1, "protocol": self.protocol, "defer_timeout": self.defer_timeout,
                               "sub_timeout": self.sub_timeout, "seed": self.seed, "topology": self.topology,
                               "schedule": self.schedule, "violation": dict(self.violation)}
        if self.shrunk_from is not None and self.shrunk_from != len(self.schedule):
            doc["shrunk_from"] = self.shrunk_from
        if self.command is not None:
            doc["command"] = self.command
        if self.delay is not None:
            doc["delay"] = list(self.delay)
        if self.not_checked is not None:
            doc["not_checked"] = dict(self.not_checked)
        return doc


def save_schedule(folder: Path | None, replay: ScheduleReplay, name: str | None = None) -> Path:
    """`replay-<protocol>-seed<N>.json` (or `name`) in `folder`: the replay's document, written atomically."""
    return _write(folder, name or f"replay-{safe_name(replay.protocol)}-seed{replay.seed}.json", replay.document())


def save_client_server(case: tuple, folder: Path | None = None) -> Path:
    """`client-server-<policy>-<digest>.json`: the check's case of CLM-CS-5
    (brokers, links, servers, policy, cache policy, capacity, requests)."""
    n, links, server_of, policy, cache_policy, capacity, requests = case
    doc = {"format": CLIENT_SERVER, "version": 1, "brokers": n, "links": [list(link) for link in links], "servers": dict(server_of),
           "policy": policy, "cache_policy": cache_policy, "capacity": capacity, "requests": [[b, m] for b, m in requests]}
    return _write(folder, f"client-server-{policy}-{_digest(json.dumps(doc))}.json", doc)


def cache_replay_name(policy: str, capacity: int | None, operations: list[dict]) -> str:
    """The file `save_cache` writes, named after the policy, the capacity and the operations."""
    return f"cache-{safe_name(policy)}-k{capacity}-{_digest(json.dumps(operations))}.json"


def save_cache(policy: str, capacity: int | None, operations: list[dict], folder: Path | None = None) -> Path:
    """A cache replay (CLM-CACHE-1's failing run): the policy, the capacity and the operations."""
    doc = {"format": CACHE, "version": 1, "policy": policy, "capacity": capacity, "operations": operations}
    return _write(folder, cache_replay_name(policy, capacity, operations), doc)


def save_matching(out_dir: Path, files: Mapping[str, bytes], engine: Mapping[str, Any], seed: int, failure: Mapping[str, str],
                  extra: Mapping[str, Any] | None = None) -> Path:
    """`matching-<digest>/` under `out_dir`: the workload and outputs in
    `files` (subscriptions.jsonl, events.jsonl, expected.jsonl,
    received.jsonl, stderr.txt) and `case.json`, named after the inputs;
    `extra` adds case.json fields (where it was found, what was not checked)."""
    digest = hashlib.sha256(files["subscriptions.jsonl"] + b"\0" + files["events.jsonl"]).hexdigest()[:10]
    final = out_dir / f"matching-{digest}"
    case = {"format": MATCHING, "version": 1, "engine": dict(engine), "seed": seed, "failure": dict(failure), **(extra or {})}
    scratch: Path | None = None
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=out_dir))
        for name, data in files.items():
            (scratch / name).write_bytes(data)
        (scratch / CASE_FILE).write_text(json.dumps(case, indent=1, ensure_ascii=False) + "\n")
        os.chmod(scratch, 0o777 & ~_umask())
        if final.exists():
            shutil.rmtree(final)
        scratch.rename(final)
    except BaseException as exc:  # Ctrl-C too: a replay directory is whole or absent
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        if not isinstance(exc, OSError):
            raise
        shown = {"case": case, "files": {name: data.decode("utf-8", "replace") for name, data in files.items()}}
        raise ReplayNotSaved(final, shown, exc.strerror or str(exc),
                             found=f"a failure ({failure.get('kind')}: {failure.get('message')})") from None
    return final


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
