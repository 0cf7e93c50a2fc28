"""A real Prometheus on 127.0.0.1 holding series the test writes, for the tests of the Prometheus
connector and the sources that read it (Kubernetes usage, GPU telemetry).

The test writes its series in the OpenMetrics text format; `promtool tsdb create-blocks-from
openmetrics` turns them into TSDB blocks, and Debian's `prometheus` (2.42; the Makefile's
`test-prometheus` installs it, `promtool` comes with it) serves them: no scrape targets, a
retention of 100 years so that blocks in the past are kept, a free port. Backfilled blocks carry
none of the staleness markers a scraping Prometheus writes when a series disappears, so a series
would linger for the default 5-minute lookback after its last sample: the server looks back one
minute instead, the spacing of the tests' samples.
"""

from __future__ import annotations

import hashlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

READY_TIMEOUT_SECONDS = 30
LOOKBACK_DELTA = "1m"
CONFIG = "global:\n  scrape_interval: 1m\nscrape_configs: []\n"


def installed() -> bool:
    """Whether Prometheus and promtool are on this machine."""
    return shutil.which("prometheus") is not None and shutil.which("promtool") is not None


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PrometheusServers:
    """Running Prometheus servers, one per distinct set of series, stopped by `stop`."""

    def __init__(self) -> None:
        self._root = Path(tempfile.mkdtemp(prefix="runledger-prometheus-"))
        self._running: dict[str, tuple[subprocess.Popen[bytes], str]] = {}

    def serve(self, openmetrics: str) -> str:
        """The URL (`http://127.0.0.1:<port>`) of a server holding the series of `openmetrics`
        (OpenMetrics text ending in `# EOF`), started on first use and shared by later calls with
        the same text.

        Raises:
            RuntimeError: promtool refused the text, or the server did not get ready; the message
                holds the tool's or the server's own output.
        """
        key = hashlib.sha256(openmetrics.encode()).hexdigest()[:16]
        if key not in self._running:
            self._running[key] = self._start(key, openmetrics)
        return self._running[key][1]

    def _start(self, key: str, openmetrics: str) -> tuple[subprocess.Popen[bytes], str]:
        folder = self._root / key
        data = folder / "data"
        data.mkdir(parents=True)
        series = folder / "series.om"
        series.write_text(openmetrics)
        created = subprocess.run(
            ["promtool", "tsdb", "create-blocks-from", "openmetrics", str(series), str(data)],
            capture_output=True,
            text=True,
            check=False,
        )
        if created.returncode != 0:
            raise RuntimeError(f"promtool could not write the blocks: {created.stderr or created.stdout}")
        config = folder / "prometheus.yml"
        config.write_text(CONFIG)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = folder / "prometheus.log"
        with log.open("wb") as output:
            server = subprocess.Popen(
                [
                    "prometheus",
                    f"--config.file={config}",
                    f"--storage.tsdb.path={data}",
                    "--storage.tsdb.retention.time=100y",
                    f"--web.listen-address=127.0.0.1:{port}",
                    f"--query.lookback-delta={LOOKBACK_DELTA}",
                ],
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise RuntimeError(f"prometheus exited with {server.returncode}: {log.read_text()[-3000:]}")
            try:
                if requests.get(f"{url}/-/ready", timeout=1).status_code == 200:
                    return server, url
            except requests.ConnectionError:
                pass
            time.sleep(0.1)
        server.kill()
        raise RuntimeError(f"prometheus was not ready after {READY_TIMEOUT_SECONDS} s: {log.read_text()[-3000:]}")

    def stop(self) -> None:
        """Stops every server and removes their folders."""
        for server, _ in self._running.values():
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        self._running.clear()
        shutil.rmtree(self._root, ignore_errors=True)


@pytest.fixture(scope="session")
def prometheus_servers() -> Iterator[PrometheusServers]:
    """Prometheus servers for the session: `prometheus_servers.serve(openmetrics)` gives a URL."""
    if not installed():
        pytest.fail("Prometheus is not installed: `make test` installs Debian's prometheus package (as root)")
    servers = PrometheusServers()
    try:
        yield servers
    finally:
        servers.stop()
