"""A post-mortem report opened in headless Chromium: its charts render and it loads nothing.

The browser is Debian's `chromium` (the Makefile's test bootstrap installs it with apt-get when it
can); without it the test is skipped and says why. Chromium is driven over the DevTools protocol
on a pipe (`--remote-debugging-pipe`: commands on fd 3, answers on fd 4, NUL-separated JSON), so
every request the page makes is seen as a `Network.requestWillBeSent` event, whatever its scheme.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import struct
import subprocess
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipelines.reports.charts import ACTUAL_COLOR
from tests.support.demo_lake import SharedDemo

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)
TIMEOUT_SECONDS = 60
VIEWPORT = {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
NEAR_WHITE = 235
CHART_BOUNDS = """JSON.stringify([...document.querySelectorAll('figure.chart svg')].map(svg => {
    const box = svg.getBoundingClientRect();
    return {x: box.x + window.scrollX, y: box.y + window.scrollY, width: box.width, height: box.height};
}))"""


class DevTools:
    """A Chromium process and its DevTools protocol pipe."""

    def __init__(self, chromium: str, user_data_dir: Path) -> None:
        commands_read, self._commands = os.pipe()
        self._answers, answers_write = os.pipe()
        # Chromium's ends, moved to 10 or above so that redirecting them to 3 and 4 never
        # overwrites one with the other; bash does it in the child (dash reads one-digit fds only).
        child_read = fcntl.fcntl(commands_read, fcntl.F_DUPFD_CLOEXEC, 10)
        child_write = fcntl.fcntl(answers_write, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(commands_read)
        os.close(answers_write)
        redirect = f"3<&{child_read} 4>&{child_write} {child_read}<&- {child_write}>&-"
        self.process = subprocess.Popen(
            [
                "bash",
                "-c",
                f'exec "$0" "$@" {redirect}',
                chromium,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={user_data_dir}",
                "about:blank",
            ],
            pass_fds=(child_read, child_write),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        os.close(child_read)
        os.close(child_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Sends a command and waits for its answer, keeping the events that arrive meanwhile."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._receive()
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]
            self.events.append(answer)

    def wait_for(self, method: str) -> dict[str, Any]:
        """Waits for the next event of a kind."""
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._receive()
            self.events.append(event)
            if event.get("method") == method:
                return event

    def _receive(self) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT_SECONDS
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._answers], [], [], max(0, deadline - time.monotonic()))
            chunk = os.read(self._answers, 1 << 20) if ready else b""
            if not chunk:
                raise RuntimeError(f"Chromium stopped answering: {self._stderr()}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _stderr(self) -> str:
        if self.process.poll() is None:
            return "(still running)"
        return self.process.stderr.read().decode(errors="replace")[-2000:]

    def close(self) -> None:
        os.close(self._commands)
        os.close(self._answers)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stderr.close()


def png_size(png: bytes) -> tuple[int, int]:
    assert png.startswith(PNG_SIGNATURE)
    return struct.unpack(">II", png[16:24])


def png_pixels(png: bytes) -> list[tuple[int, int, int]]:
    """Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes) to RGB pixels."""
    width, height = png_size(png)
    bit_depth, color_type, interlace = png[24], png[25], png[28]
    assert (bit_depth, interlace) == (8, 0) and color_type in (2, 6)
    channels = 3 if color_type == 2 else 4
    data, position = b"", 8
    while position < len(png):
        (length,) = struct.unpack(">I", png[position : position + 4])
        kind = png[position + 4 : position + 8]
        if kind == b"IDAT":
            data += png[position + 8 : position + 8 + length]
        position += 12 + length
    raw = zlib.decompress(data)
    stride = width * channels
    previous = bytearray(stride)
    pixels = []
    for row in range(height):
        start = row * (stride + 1)
        line = bytearray(raw[start + 1 : start + 1 + stride])
        _unfilter(raw[start], line, previous, channels)
        pixels += [tuple(line[x : x + 3]) for x in range(0, stride, channels)]
        previous = line
    return pixels


def _unfilter(kind: int, line: bytearray, previous: bytearray, channels: int) -> None:
    for index in range(len(line)):
        left = line[index - channels] if index >= channels else 0
        up = previous[index]
        upper_left = previous[index - channels] if index >= channels else 0
        if kind == 1:
            line[index] = (line[index] + left) & 0xFF
        elif kind == 2:
            line[index] = (line[index] + up) & 0xFF
        elif kind == 3:
            line[index] = (line[index] + (left + up) // 2) & 0xFF
        elif kind == 4:
            estimate = left + up - upper_left
            distances = (abs(estimate - left), abs(estimate - up), abs(estimate - upper_left))
            predictor = (left, up, upper_left)[distances.index(min(distances))]
            line[index] = (line[index] + predictor) & 0xFF


@pytest.fixture(scope="module")
def chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.skip(
            "Debian's chromium package is not installed: `make test` installs it with apt-get "
            "when it runs as root with a reachable package mirror; without it the report cannot "
            "be opened in a browser here"
        )
    return path


@pytest.fixture(scope="module")
def report(shared_demo: SharedDemo) -> Path:
    """A run report of the session's demo, opened in place."""
    return shared_demo.root / ".runledger" / "reports" / "llm-7b-pt-r1" / "report.html"


@pytest.fixture
def browser(chromium: str, tmp_path: Path) -> Iterator[DevTools]:
    devtools = DevTools(chromium, tmp_path / "profile")
    try:
        yield devtools
        devtools.send("Browser.close")
    finally:
        devtools.close()


def test_report_renders_its_charts_in_chromium_without_network(browser: DevTools, report: Path, tmp_path: Path) -> None:
    target = browser.send("Target.createTarget", url="about:blank")["targetId"]
    session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    for method in ("Network.enable", "Page.enable"):
        browser.send(method, session)
    browser.send("Emulation.setDeviceMetricsOverride", session, **VIEWPORT)
    browser.send("Page.navigate", session, url=report.as_uri())
    browser.wait_for("Page.loadEventFired")

    evaluated = browser.send("Runtime.evaluate", session, expression=CHART_BOUNDS, returnByValue=True)
    charts = json.loads(evaluated["result"]["value"])
    content = browser.send("Page.getLayoutMetrics", session)["cssContentSize"]
    page = {"x": 0, "y": 0, "width": content["width"], "height": content["height"], "scale": 1}
    screenshot = base64.b64decode(
        browser.send("Page.captureScreenshot", session, format="png", clip=page, captureBeyondViewport=True)["data"]
    )
    screenshot_path = tmp_path / "report.png"
    screenshot_path.write_bytes(screenshot)
    chart_pixels = [
        png_pixels(
            base64.b64decode(
                browser.send(
                    "Page.captureScreenshot",
                    session,
                    format="png",
                    clip={**chart, "scale": 1},
                    captureBeyondViewport=True,
                )["data"]
            )
        )
        for chart in charts
    ]

    requested = [
        event["params"]["request"]["url"]
        for event in browser.events
        if event.get("method") == "Network.requestWillBeSent"
    ]
    assert requested == [report.as_uri()]  # the page itself, and nothing else
    assert len(charts) == report.read_text().count('<figure class="chart"') >= 5
    width, height = png_size(screenshot_path.read_bytes())
    assert width == VIEWPORT["width"]
    assert height >= max(chart["y"] + chart["height"] for chart in charts)
    for chart, pixels in zip(charts, chart_pixels, strict=True):
        assert chart["width"] > 300 and chart["height"] > 150
        drawn = [pixel for pixel in pixels if min(pixel) < NEAR_WHITE]
        assert len(drawn) > 0.02 * len(pixels), chart
        assert len(set(drawn)) > 20, chart  # axes, text and marks, not one flat fill
    actual_color = tuple(bytes.fromhex(ACTUAL_COLOR.removeprefix("#")))
    assert sum(pixels.count(actual_color) for pixels in chart_pixels) > 500
