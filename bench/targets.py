"""The performance targets, each computed from one size's measurements beside its target.

The targets are set for the 20M-line data set on 2 cores; the bench prints them for every size.
A ratio of rows/s is a ratio of seconds over the same line items, inverted.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.generate import size_label

GIB = 2**30
INGEST_STAGES = ("ingest", "focus_line_items")
MIN_INGEST_VS_YARDSTICK = 1.0
MIN_INGEST_VS_CONVERTER = 3.0
MAX_ATTRIBUTION_VS_YARDSTICK = 0.5
MAX_FIRST_RENDER_SECONDS = 30.0
MIN_END_TO_END_VS_YARDSTICK = 0.5
MAX_REDELIVERED_VS_YARDSTICK = 1.5
MAX_QUESTION_SECONDS = 1.0
MAX_SLOWEST_QUESTION_VS_PLAIN = 3.0
MAX_PEAK_BYTES = 3 * GIB
MAX_PEAK_GROWTH = 1.3
MAX_RERUN_SHARE = 0.05
NIGHTS = ("nightly", "rerun", "revised_budgets", "redelivered")
# The CLI on the demo: each command (`bench.harness.CLI_COMMANDS`) against the bare DuckDB process
# of the same run (`python -c "import duckdb; …select 1"`), as a ratio, and in seconds.
CLI_TARGETS = (
    # (command, what it is, at most × the bare process, at most seconds)
    ("help", "runledger --help", 1.5, 0.3),
    ("usage", "a usage error (run --period 2026-13)", 1.5, 0.3),
    ("config", "a config error (a missing --config)", 1.5, 0.3),
    ("check", "runledger check", 3.0, 1.0),
    ("query", "query on a summary table (run_costs)", 2.5, 1.0),
    ("report", "report --run of an unchanged run", 3.0, 1.0),
)


@dataclass(frozen=True)
class Figure:
    """One target: what is measured, its value, the target and whether it is met.

    Attributes:
        name: what the figure is.
        measured: the value as printed.
        target: the target as printed.
        met: whether the value meets the target (None when it could not be measured).
    """

    name: str
    measured: str
    target: str
    met: bool | None


def stage_seconds(night: dict, *stages: str) -> float:
    """Seconds of the night's steps in the given stages (summed over partitions)."""
    return sum(stage["seconds"] for stage in night["stages"] if stage["stage"] in stages)


def peak_bytes(size: dict) -> int:
    """The highest peak of the size's nightly jobs (full, re-run, revised budgets, re-delivery)."""
    return max(size[night]["peak_rss_bytes"] for night in NIGHTS if night in size)


def _ratio(name: str, value: float, bound: float, *, at_least: bool, detail: str = "") -> Figure:
    target = f"{'≥' if at_least else '≤'} {bound:g}×"
    measured = f"{value:.{2 if value >= 0.1 else 3}f}×" + (f" ({detail})" if detail else "")
    return Figure(name, measured, target, value >= bound if at_least else value <= bound)


def figures(size: dict, previous: dict | None = None) -> list[Figure]:
    """The targets of one measured size; `previous` is the size measured before it (for the
    growth of peak memory)."""
    nightly, yardstick = size["nightly"], size["yardstick"]
    ingest = stage_seconds(nightly, *INGEST_STAGES)
    attribution = stage_seconds(nightly, "cost_allocations")
    reports = stage_seconds(nightly, "reports")
    yardstick_seconds = yardstick["statement_seconds"]
    result = [
        _ratio(
            "ingest rows/s ÷ yardstick's (same lake storage)",
            yardstick_seconds / ingest,
            MIN_INGEST_VS_YARDSTICK,
            at_least=True,
            detail=f"{ingest:,.1f} s vs {yardstick_seconds:,.1f} s",
        )
    ]
    converter = size.get("converter")
    if converter and converter["returncode"] == 0:
        result.append(
            _ratio(
                "ingest rows/s ÷ focus-converter's",
                converter["wall_seconds"] / ingest,
                MIN_INGEST_VS_CONVERTER,
                at_least=True,
                detail=f"{converter['wall_seconds']:,.1f} s",
            )
        )
    else:
        result.append(
            Figure("ingest rows/s ÷ focus-converter's", "not measured", f"≥ {MIN_INGEST_VS_CONVERTER:g}×", None)
        )
    result.append(
        _ratio(
            "attribution time ÷ yardstick's",
            attribution / yardstick_seconds,
            MAX_ATTRIBUTION_VS_YARDSTICK,
            at_least=False,
            detail=f"{attribution:,.1f} s",
        )
    )
    result.append(
        Figure(
            "first render of all run reports",
            f"{reports:,.1f} s ({nightly['reports']} reports)",
            f"≤ {MAX_FIRST_RENDER_SECONDS:g} s",
            reports <= MAX_FIRST_RENDER_SECONDS,
        )
    )
    revised = size["revised_budgets"]
    rewritten, changed = revised["rewritten_reports"], sorted(revised["revised_runs"])
    result.append(
        Figure(
            "run reports written again after budgets were revised",
            f"{len(rewritten)} of {revised['reports']} ({len(changed)} budgets revised)",
            "the revised runs' only",
            rewritten == changed,
        )
    )
    result.append(
        _ratio(
            "end to end rows/s ÷ yardstick's",
            yardstick["wall_seconds"] / nightly["wall_seconds"],
            MIN_END_TO_END_VS_YARDSTICK,
            at_least=True,
            detail=f"{nightly['wall_seconds']:,.1f} s vs {yardstick['wall_seconds']:,.1f} s",
        )
    )
    redelivered, month_yardstick = size["redelivered"], size["yardstick_redelivered"]
    result.append(
        _ratio(
            "re-delivered month ÷ yardstick's time",
            redelivered["wall_seconds"] / month_yardstick["wall_seconds"],
            MAX_REDELIVERED_VS_YARDSTICK,
            at_least=False,
            detail=f"{size_label(redelivered['rows'])} lines: {redelivered['wall_seconds']:,.1f} s vs "
            f"{month_yardstick['wall_seconds']:,.1f} s",
        )
    )
    for answer in size["questions"].values():
        result.append(
            Figure(
                f"query: {answer['question']}",
                f"{answer['median_seconds']:.3f} s",
                f"≤ {MAX_QUESTION_SECONDS:g} s",
                answer["median_seconds"] <= MAX_QUESTION_SECONDS,
            )
        )
    slowest = max(answer["median_seconds"] for answer in size["questions"].values())
    plain = size["plain_duckdb"]["median_seconds"]
    result.append(
        _ratio(
            "slowest query ÷ plain DuckDB over the raw export",
            slowest / plain,
            MAX_SLOWEST_QUESTION_VS_PLAIN,
            at_least=False,
            detail=f"{plain:.2f} s",
        )
    )
    peak = peak_bytes(size)
    result.append(
        Figure("peak memory", f"{peak / GIB:.2f} GiB", f"≤ {MAX_PEAK_BYTES / GIB:g} GiB", peak <= MAX_PEAK_BYTES)
    )
    if previous is not None:
        result.append(
            _ratio(
                f"peak memory ÷ {previous['size']}'s",
                peak / peak_bytes(previous),
                MAX_PEAK_GROWTH,
                at_least=False,
            )
        )
    result.append(
        _ratio(
            "re-run with nothing new ÷ full run",
            size["rerun"]["wall_seconds"] / nightly["wall_seconds"],
            MAX_RERUN_SHARE,
            at_least=False,
            detail=f"{size['rerun']['wall_seconds']:,.1f} s",
        )
    )
    return result


def cli_figures(cli: dict) -> list[Figure]:
    """The CLI's targets from its measurement on the demo (`bench.harness.cli_startup`): each
    command's median seconds as a ratio to the bare DuckDB process's, then in seconds."""
    seconds = {name: command["median_seconds"] for name, command in cli["commands"].items()}
    bare = seconds["bare"]
    result = []
    for name, what, max_ratio, _ in CLI_TARGETS:
        result.append(
            _ratio(
                f"CLI: {what} ÷ bare DuckDB",
                seconds[name] / bare,
                max_ratio,
                at_least=False,
                detail=f"{seconds[name]:.2f} s vs {bare:.2f} s",
            )
        )
    for name, what, _, max_seconds in CLI_TARGETS:
        result.append(
            Figure(f"CLI: {what}", f"{seconds[name]:.2f} s", f"≤ {max_seconds:g} s", seconds[name] <= max_seconds)
        )
    return result
