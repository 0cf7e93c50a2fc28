"""The bench's results as a plain-text table, and its targets as Markdown."""

from __future__ import annotations

from bench.targets import Figure, cli_figures, figures

GIB = 2**30
MEASUREMENTS = (
    ("nightly", "nightly job (end to end)"),
    ("rerun", "re-run, nothing new"),
    ("revised_budgets", "night, budgets revised"),
    ("redelivered", "night, month re-delivered"),
    ("yardstick", "yardstick into a lake"),
    ("yardstick_redelivered", "yardstick, re-delivered month"),
)


def _gib(value: int | None) -> str:
    return f"{value / GIB:.2f}" if value else "–"


def _rate(value: int | None) -> str:
    return f"{value:,}" if value else "–"


def _load(entry: dict) -> str:
    return f"{entry['load_average']['before'][0]:.1f}"


def _met(figure: Figure) -> str:
    return {True: "met", False: "MISSED", None: "–"}[figure.met]


def _size_figures(results: dict) -> list[tuple[dict, list[Figure]]]:
    measured = [size for size in results["sizes"] if "failed" not in size]
    return [(size, figures(size, measured[index - 1] if index else None)) for index, size in enumerate(measured)]


def format_results(results: dict) -> str:
    """Per size: every stage of the nightly job, then each measured process (nights, yardsticks,
    converter, multiprocess) with seconds, rows/s, peak GiB and the 1-minute load average before
    it, the questions' median seconds, then every target with its figure; then the CLI on the demo:
    each command's median seconds and its targets."""
    machine = results["machine"]
    heading = f"RunLedger bench, commit {results['commit']}, started {results['started_at']}, "
    lines = [
        f"{heading}{machine['cpus']} CPUs, DuckDB {machine['duckdb']}",
        f"{'size':>5}  {'measurement':<48} {'seconds':>9} {'rows/s':>11} {'peak GiB':>8} {'load':>5}",
    ]
    for size in results["sizes"]:
        label = size["size"]
        if "failed" in size:
            lines.append(f"{label:>5}  FAILED: {size['failed'].splitlines()[0]}")
            continue
        for stage in size["nightly"]["stages"]:
            lines.append(
                f"{label:>5}  {'  ' + stage['stage']:<48} {stage['seconds']:>9.2f} "
                f"{_rate(stage['rows_per_second']):>11} {_gib(stage['peak_rss_bytes']):>8} {'':>5}"
            )
        rows = [(name, size[key]) for key, name in MEASUREMENTS]
        if size.get("converter"):
            failed = "" if size["converter"]["returncode"] == 0 else " (failed)"
            rows.append((f"focus-converter 1.0.0{failed}", size["converter"]))
        for name, entry in (size.get("multiprocess") or {}).items():
            if isinstance(entry, dict):
                rows.append((f"multiprocess, {name.removeprefix('team-')} proc., PG lake", entry))
        for name, entry in rows:
            lines.append(
                f"{label:>5}  {name:<48} {entry['wall_seconds']:>9.2f} {_rate(entry['rows_per_second']):>11} "
                f"{_gib(entry['peak_rss_bytes']):>8} {_load(entry):>5}"
            )
        for answer in (*size["questions"].values(), size["plain_duckdb"]):
            lines.append(f"{label:>5}  {'query: ' + answer['question']:<48} {answer['median_seconds']:>9.2f}")
    for size, measured in _size_figures(results):
        lines.append("")
        lines.append(f"{size['size']:>5}  {'target':<58} {'measured':<32} {'target':<12} ")
        lines.extend(
            f"{size['size']:>5}  {figure.name:<58} {figure.measured:<32} {figure.target:<12} {_met(figure)}"
            for figure in measured
        )
    lines.extend(_cli_lines(results.get("cli")))
    return "\n".join(lines)


def _cli_lines(cli: dict | None) -> list[str]:
    if cli is None:
        return []
    if "failed" in cli:
        return ["", f"{'demo':>5}  CLI FAILED: {cli['failed'].splitlines()[0]}"]
    load = f"{cli['load_average']['before'][0]:.1f}"
    lines = [
        "",
        f"{'demo':>5}  {'CLI command (median of 3 wall seconds)':<48} {'seconds':>9} {'':>11} {'':>8} {load:>5}",
    ]
    lines.extend(
        f"{'demo':>5}  {command['command'][:48]:<48} {command['median_seconds']:>9.2f}"
        for command in cli["commands"].values()
    )
    lines.append("")
    lines.append(f"{'demo':>5}  {'target':<58} {'measured':<32} {'target':<12} ")
    lines.extend(
        f"{'demo':>5}  {figure.name:<58} {figure.measured:<32} {figure.target:<12} {_met(figure)}"
        for figure in cli_figures(cli)
    )
    return lines


def format_targets_markdown(results: dict) -> str:
    """Every target as a Markdown table: one column per measured size, the target beside it; the
    CLI's targets on the demo in a table of their own below it."""
    lines = _sizes_markdown(_size_figures(results))
    cli = results.get("cli")
    if cli and "failed" not in cli:
        lines += ["", "| CLI on the demo | target | measured |", "|---|---|---:|"]
        lines.extend(
            f"| {figure.name.removeprefix('CLI: ')} | {figure.target} | {figure.measured}{_mark(figure)} |"
            for figure in cli_figures(cli)
        )
    return "\n".join(lines)


def _sizes_markdown(by_size: list[tuple[dict, list[Figure]]]) -> list[str]:
    if not by_size:
        return ["No size was measured."]
    # in the order of the last size, which has every figure (the growth of memory needs a size before)
    names = [figure.name for figure in by_size[-1][1]]
    targets: dict[str, str] = {}
    cells: dict[tuple[str, str], str] = {}
    for size, measured in by_size:
        for figure in measured:
            targets.setdefault(figure.name, figure.target)
            cells[(figure.name, size["size"])] = f"{figure.measured}{_mark(figure)}"
    labels = [size["size"] for size, _ in by_size]
    lines = [
        f"| figure | target | {' | '.join(labels)} |",
        f"|---|---|{'---:|' * len(labels)}",
    ]
    lines.extend(
        f"| {name} | {targets[name]} | {' | '.join(cells.get((name, label), '') for label in labels)} |"
        for name in names
    )
    return lines


def _mark(figure: Figure) -> str:
    return {True: " ✓", False: " ✗", None: ""}[figure.met]
