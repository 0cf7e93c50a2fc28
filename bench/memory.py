"""`python -m bench memory`: the nightly job on one cached data set at each of several DuckDB
memory limits, each on a fresh lake in its own measured process: wall seconds, seconds per stage
and peak memory, side by side. Every limit must leave the same totals in its lake."""

from __future__ import annotations

import re
from collections.abc import Callable

from bench.harness import GIB, BenchFailed, BenchOptions, _nightly, _warehouse_totals, work_folder
from bench.parallel import DuckDBLimits
from pipelines.config import load_config

# DuckDB's own spelling of a memory size: a number and a unit (it also takes KB, MB … in 1000s).
_LIMIT = re.compile(r"^\d+(\.\d+)?(KiB|MiB|GiB|TiB|KB|MB|GB|TB)$")


def parse_limits(text: str) -> tuple[str, ...]:
    """The memory limits of a comma-separated list ("2.5GiB,2GiB"), in order.

    Raises:
        ValueError: a limit is not a number and a unit, a limit is repeated, or there is none.
    """
    limits = tuple(part.strip().replace(" ", "") for part in text.split(",") if part.strip())
    for limit in limits:
        if not _LIMIT.match(limit):
            raise ValueError(f"{limit!r} is not a memory limit: a number and a unit, e.g. 2.5GiB or 2000MiB")
    if not limits:
        raise ValueError("no memory limit given, e.g. 2.5GiB,2GiB")
    if len(set(limits)) != len(limits):
        raise ValueError(f"a memory limit is given twice: {text}")
    return limits


def measure_memory_limits(
    rows: int, limits: tuple[str, ...], options: BenchOptions, echo: Callable[[str], None] = print
) -> dict:
    """The full nightly job on the cached data set of `rows` line items, once per limit, each on
    a fresh work folder (the last one's is kept).

    Raises:
        BenchFailed: a run failed, or the lakes' totals differ between limits.
    """
    from bench.generate import data_set, size_label

    dataset = data_set(options.cache_dir, rows, options.runs)
    measured = []
    for limit in limits:
        work = work_folder(dataset, options.work_dir)
        nightly = _nightly(
            work, rows, f"memory-{limit}", options, arguments=tuple(DuckDBLimits(memory_limit=limit).arguments())
        )
        totals = _warehouse_totals(load_config(work.config_path).lake)
        measured.append({"memory_limit": limit, **nightly, "warehouse": totals})
        echo(
            f"{size_label(rows)} at {limit}: nightly job {nightly['wall_seconds']:,.1f} s, "
            f"peak {nightly['peak_rss_bytes'] / GIB:,.2f} GiB"
        )
        if totals != measured[0]["warehouse"]:
            raise BenchFailed(
                f"at {limit} the lake holds {totals}, at {measured[0]['memory_limit']} {measured[0]['warehouse']}"
            )
    return {"size": size_label(rows), "rows": rows, "runs": options.runs, "limits": measured}


def format_memory_limits(result: dict) -> str:
    """The limits side by side: wall seconds (and their ratio to the first limit's), peak RSS,
    then seconds per stage (each stage's peak RSS in parentheses)."""
    runs = result["limits"]
    first = runs[0]
    header = ["", *(run["memory_limit"] for run in runs)]
    rows = [
        ["nightly job, wall s", *(f"{run['wall_seconds']:,.1f}" for run in runs)],
        ["  ÷ " + first["memory_limit"], *(f"{run['wall_seconds'] / first['wall_seconds']:.2f}×" for run in runs)],
        ["peak RSS, GiB", *(f"{run['peak_rss_bytes'] / GIB:.2f}" for run in runs)],
    ]
    stages = list(dict.fromkeys(stage["stage"] for run in runs for stage in run["stages"]))
    for stage in stages:
        cells = []
        for run in runs:
            found = next((s for s in run["stages"] if s["stage"] == stage), None)
            cells.append(f"{found['seconds']:,.1f} ({found['peak_rss_bytes'] / GIB:.2f})" if found else "")
        rows.append([f"  {stage}, s (GiB)", *cells])
    widths = [max(len(line[column]) for line in [header, *rows]) for column in range(len(header))]
    lines = [f"{result['size']} line items, {result['runs']} runs: the nightly job at each DuckDB memory limit"]
    for line in [header, *rows]:
        lines.append(
            "  ".join(cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(line))
        )
    return "\n".join(lines)
