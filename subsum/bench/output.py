"""What the benchmarks write besides summary.json: CSV tables and
matplotlib figures saved as PNG (the Agg backend: no display needed).

matplotlib is imported when a benchmark first plots, not when this module
is imported: it is heavy, and only the plotting step needs it.
"""

from __future__ import annotations

import csv
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence


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
    with ProcessPoolExecutor(max_workers=min(workers, len(tasks))) as pool:
        yield from pool.map(run, tasks)
