"""What the benchmarks write besides summary.json: CSV tables and
matplotlib figures saved as PNG (the Agg backend: no display needed).

matplotlib is imported when a benchmark first plots, not when this module
is imported: it is heavy, and only the plotting step needs it.
"""

from __future__ import annotations

import csv
import json
import multiprocessing
import signal
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from subsum.core.errors import InputError


def write_csv(path: Path, rows: Sequence[dict], fields: Iterable[str] | None = None) -> Path:
    """`rows` as a CSV table with a header line: `fields` in that order, or
    else the first row's keys (no columns at all when there is no row)."""
    header = list(fields) if fields is not None else list(rows[0]) if rows else []
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    return path


def pyplot() -> Any:
    """matplotlib.pyplot, on the Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Path, *, dpi: int = 110, **layout: Any) -> Path:
    """Lay the figure out (`layout`: tight_layout's options), write it to
    `path` as PNG at `dpi`, and close it."""
    fig.tight_layout(**layout)
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return path


def map_runs(run: Callable[[Any], dict], tasks: Sequence[Any], workers: int) -> Iterator[dict]:
    """`run` over `tasks`, results in task order: in `workers` processes, or
    in this one when `workers` is 1 (what --quick runs and tests patch).
    Seeded runs give the same results either way."""
    if min(workers, len(tasks)) <= 1:
        yield from map(run, tasks)
        return
    # the workers ignore Ctrl-C: it is the parent's, which stops them (no worker's traceback on the terminal)
    pool = multiprocessing.get_context("fork").Pool(min(workers, len(tasks)), signal.signal, (signal.SIGINT, signal.SIG_IGN))
    try:
        yield from pool.imap(run, tasks)
    except BaseException:  # Ctrl-C or a failed task: stop the workers now, the running tasks and the queued ones alike
        pool.terminate()
        raise
    finally:
        pool.close()
        pool.join()


def task_key(task: Any) -> str:
    """A task as the text that names it in a run store (its JSON, keys sorted)."""
    return json.dumps(task, sort_keys=True)


def stored_runs(store: Path) -> dict[str, dict]:
    """The runs a store already holds: task key -> report. A line that is not
    one JSON object with "task" and "report" is an InputError naming the
    file and the line (exit 2)."""
    done: dict[str, dict] = {}
    if not store.is_file():
        return done
    for number, line in enumerate(store.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(str(store), number, None, f"not JSON ({error.msg}); a stored run is a JSON object with task and report") from None
        for field in ("task", "report"):
            if not isinstance(record, dict) or field not in record:
                raise InputError(str(store), number, field, "missing: a stored run is a JSON object with task and report")
        done[task_key(record["task"])] = record["report"]
    return done


def resumable_runs(run: Callable[[Any], dict], tasks: Sequence[Any], workers: int, store: Path | None) -> Iterator[dict]:
    """`map_runs`, remembering each finished run in `store` (JSON lines) and
    skipping the runs it already holds: a long bench stopped part way goes
    on from where it was with --resume. Results in task order, as map_runs."""
    if store is None:
        yield from map_runs(run, tasks, workers)
        return
    done = stored_runs(store)
    todo, pending = [], set()
    for t in tasks:
        if task_key(t) not in done and task_key(t) not in pending:
            todo.append(t)
            pending.add(task_key(t))
    fresh = map_runs(run, todo, workers)
    with store.open("a", encoding="utf-8") as out:
        for task in tasks:
            key = task_key(task)
            if key not in done:
                done[key] = next(fresh)
                out.write(json.dumps({"task": task, "report": done[key]}, sort_keys=True) + "\n")
                out.flush()
            yield done[key]


