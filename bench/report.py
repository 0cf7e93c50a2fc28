"""The bench's results as a plain-text table."""

from __future__ import annotations

GIB = 2**30


def _gib(value: int | None) -> str:
    return f"{value / GIB:.2f}" if value else "–"


def _rate(value: int | None) -> str:
    return f"{value:,}" if value else "–"


def _load(entry: dict) -> str:
    return f"{entry['load_average']['before'][0]:.1f}"


def format_results(results: dict) -> str:
    """Per size: every stage of the nightly job, then the whole job, the re-run, the multiprocess
    run, the yardstick and the converter, with seconds, rows/s, peak GiB and the 1-minute load
    average before each; then the targets' ratios and how the peak grew to the largest size."""
    lines = [f"{'size':>5}  {'measurement':<28} {'seconds':>9} {'rows/s':>11} {'peak GiB':>8} {'load':>5}"]
    for size in results["sizes"]:
        label = size["size"]
        if "failed" in size:
            lines.append(f"{label:>5}  FAILED: {size['failed'].splitlines()[0]}")
            continue
        for stage in size["nightly"]["stages"]:
            lines.append(
                f"{label:>5}  {'  ' + stage['stage']:<28} {stage['seconds']:>9.2f} "
                f"{_rate(stage['rows_per_second']):>11} {_gib(stage['peak_rss_bytes']):>8} {'':>5}"
            )
        rows = [("nightly job (end to end)", size["nightly"]), ("re-run, nothing new", size["rerun"])]
        multiprocess = size.get("multiprocess")
        if multiprocess:
            rows.extend(
                (f"multiprocess, {name.removeprefix('team-')} proc., PG lake", entry)
                for name, entry in multiprocess.items()
                if isinstance(entry, dict)
            )
        rows.append(("yardstick DuckDB pass", size["yardstick"]))
        if size.get("converter"):
            rows.append(
                (
                    "focus-converter 1.0.0" + ("" if size["converter"]["returncode"] == 0 else " (failed)"),
                    size["converter"],
                )
            )
        for name, entry in rows:
            lines.append(
                f"{label:>5}  {name:<28} {entry['wall_seconds']:>9.2f} {_rate(entry['rows_per_second']):>11} "
                f"{_gib(entry['peak_rss_bytes']):>8} {_load(entry):>5}"
            )
        lines.append(f"{label:>5}  {'targets':<28} {target_summary(size)}")
    measured = [size for size in results["sizes"] if "failed" not in size]
    if len(measured) > 1:
        lines.append(memory_growth(measured))
    return "\n".join(lines)


def memory_growth(sizes: list[dict]) -> str:
    """The end-to-end peak of the largest size against the one before it (the issue asks for
    at most 1.5x from 5M to 20M)."""
    before, largest = sizes[-2], sizes[-1]
    ratio = largest["nightly"]["peak_rss_bytes"] / before["nightly"]["peak_rss_bytes"]
    return (
        f"peak memory {before['size']} -> {largest['size']}: {_gib(before['nightly']['peak_rss_bytes'])} -> "
        f"{_gib(largest['nightly']['peak_rss_bytes'])} GiB ({ratio:.2f}x)"
    )


def target_summary(size: dict) -> str:
    """The ratios the issue's targets are about, for one size."""
    nightly = size["nightly"]
    parts = [f"job/yardstick {nightly['rows_per_second'] / size['yardstick']['rows_per_second']:.2f}x"]
    converter = size.get("converter")
    if converter and converter["returncode"] == 0:
        parts.append(f"job/converter {nightly['rows_per_second'] / converter['rows_per_second']:.2f}x")
    parts.append(f"re-run/full {size['rerun']['wall_seconds'] / nightly['wall_seconds']:.3f}")
    if size.get("multiprocess"):
        speed_up, ingest_speed_up = size["multiprocess"]["speed_up"], size["multiprocess"]["ingest_speed_up"]
        parts.append(f"2 processes vs 1: {speed_up:.2f}x end to end, {ingest_speed_up:.2f}x ingest")
    return ", ".join(parts)
