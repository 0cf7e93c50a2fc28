"""Renders Vega-Lite charts to SVG (and PNG on demand), in worker processes when a report set has many.

vl_convert takes about 0.1 s of CPU per chart for the SVG, mostly measuring text, and serializes
the calls of one process; rasterizing a PNG from that SVG costs about as much again, so PNGs are
drawn only when asked for. A report set of 200 runs has about 1,100 charts. Worker processes
(this file run as a script, one per core) render them side by side while the parent prepares the
next charts and writes finished reports. They are plain subprocesses speaking JSON lines on their
standard streams, so they never re-import the caller's `__main__` (as multiprocessing's spawn
would) and never inherit the parent's DuckDB or Dagster threads (as a fork would). This module
imports only the standard library and, in a worker, vl_convert; run by its path (not `-m`, which
would import the `pipelines.reports` package and DuckDB first), a worker starts quickly.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from concurrent.futures import Future
from typing import Any, BinaryIO

PNG_SCALE = 2
PNG_ARGUMENT = "--png"
# Below this many runs to render, starting worker processes (about a second) costs more than
# it saves.
POOL_FROM_RUNS = 4
_STOP = None


def render_chart(vega_lite: dict[str, Any], *, png: bool = False) -> tuple[str, bytes | None]:
    """Renders one Vega-Lite specification (data inline) as an SVG document and, with `png`, a
    PNG at twice the nominal size rasterized from that SVG (else None)."""
    import vl_convert

    svg = vl_convert.vegalite_to_svg(vega_lite)
    return svg, vl_convert.svg_to_png(svg, scale=PNG_SCALE) if png else None


class InlineRenderer:
    """Renders in the calling process when a chart is submitted: small report sets, one core."""

    def __init__(self, *, png: bool = False) -> None:
        self._png = png

    def submit(self, vega_lite: dict[str, Any]) -> Future:
        """Renders the chart now; the future holds `(svg, png or None)` or the error."""
        future: Future = Future()
        try:
            future.set_result(render_chart(vega_lite, png=self._png))
        except Exception as error:  # noqa: BLE001 - handed over through the future, as the worker pool does
            future.set_exception(error)
        return future

    def close(self) -> None:
        """Nothing to release."""


class WorkerRenderer:
    """Renders in worker processes: each is fed by one parent thread, charts in submission order."""

    def __init__(self, workers: int, *, png: bool = False) -> None:
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        # -P: the script's folder (this package's modules) stays off the worker's import path
        command = [sys.executable, "-P", __file__, *([PNG_ARGUMENT] if png else [])]
        self._processes = [
            subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) for _ in range(workers)
        ]
        self._feeders = [
            threading.Thread(target=self._feed, args=(process,), name=f"chart-renderer-{process.pid}", daemon=True)
            for process in self._processes
        ]
        for feeder in self._feeders:
            feeder.start()

    def submit(self, vega_lite: dict[str, Any]) -> Future:
        """Queues the chart; the future holds `(svg, png or None)` or the worker's error."""
        future: Future = Future()
        self._tasks.put((json.dumps(vega_lite).encode() + b"\n", future))
        return future

    def close(self) -> None:
        """Lets the workers finish what was submitted, then ends them."""
        for _ in self._feeders:
            self._tasks.put(_STOP)
        for feeder in self._feeders:
            feeder.join()
        for process in self._processes:
            process.stdin.close()
            process.wait()
            process.stdout.close()

    def _feed(self, process: subprocess.Popen) -> None:
        while (task := self._tasks.get()) is not _STOP:
            request, future = task
            try:
                process.stdin.write(request)
                process.stdin.flush()
                future.set_result(_read_result(process.stdout))
            except Exception as error:  # noqa: BLE001 - the caller raises it for that chart
                future.set_exception(error)


def _read_result(stream: BinaryIO) -> tuple[str, bytes | None]:
    header_line = stream.readline()
    if not header_line:
        raise RuntimeError("a chart rendering worker exited; its error is in the log above")
    header = json.loads(header_line)
    if "error" in header:
        raise RuntimeError(f"rendering a chart failed: {header['error']}")
    svg = stream.read(header["svg_bytes"]).decode()
    return svg, stream.read(header["png_bytes"]) if header["png_bytes"] is not None else None


def chart_renderer(runs_to_render: int, *, png: bool = False) -> InlineRenderer | WorkerRenderer:
    """A renderer for a report set: one worker process per available core when there are
    POOL_FROM_RUNS runs or more and more than one core, else rendering inline. Call `close()`.

    Args:
        runs_to_render: how many run reports will have their charts drawn.
        png: also rasterize each chart as a PNG.
    """
    workers = len(os.sched_getaffinity(0))
    if workers < 2 or runs_to_render < POOL_FROM_RUNS:
        return InlineRenderer(png=png)
    return WorkerRenderer(workers, png=png)


def _serve(requests: BinaryIO, results: BinaryIO, *, png: bool) -> None:
    """A worker's loop: one JSON specification per line in, a JSON header line and the SVG (and
    PNG) bytes out."""
    for line in requests:
        try:
            svg, png_bytes = render_chart(json.loads(line), png=png)
        except Exception as error:  # noqa: BLE001 - reported to the parent, which raises it for that chart
            results.write(json.dumps({"error": f"{type(error).__name__}: {error}"}).encode() + b"\n")
        else:
            svg_bytes = svg.encode()
            header = {"svg_bytes": len(svg_bytes), "png_bytes": None if png_bytes is None else len(png_bytes)}
            results.write(json.dumps(header).encode() + b"\n")
            results.write(svg_bytes)
            if png_bytes is not None:
                results.write(png_bytes)
        results.flush()


if __name__ == "__main__":
    _serve(sys.stdin.buffer, sys.stdout.buffer, png=PNG_ARGUMENT in sys.argv[1:])
