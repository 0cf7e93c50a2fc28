"""The `prometheus` telemetry source against a real Prometheus (Debian's 2.42, blocks written by
promtool from the series below): DCGM exporter series become GPU-hours, the profiling metric
preferred where a GPU has it, hosts resolved by label or node map, and saved responses read the
same; bad values and an unreachable server are named."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
import requests

from connectors.errors import SourceError
from connectors.prometheus import HttpPrometheus, SavedPrometheus
from connectors.prometheus.series import to_unix
from pipelines.config import load_config
from pipelines.sources.intervals import ClusterNode
from pipelines.sources.prometheus.reader import ENGINE_ACTIVE, GPU_UTIL, gpu_hours
from pipelines.sources.registry import kind_of
from pipelines.sources.telemetry import GpuHour
from tests.support import write_config
from tests.support.prometheus import PrometheusServers, free_port

pytestmark = pytest.mark.integration

START = datetime(2026, 11, 2, 8)
END = datetime(2026, 11, 2, 10)
EPOCH = datetime(1970, 1, 1)
# node-a: an EC2 node relabelled with its instance id, two GPUs of the DCGM_FI_DEV_GPU_UTIL only;
# node-b: no instance id (its host through the node map), one GPU with both metrics; a pod's GPU
# on node-c names its job.
SERIES = (
    (GPU_UTIL, {"gpu": "0", "UUID": "GPU-a0", "Hostname": "node-a", "instance_id": "i-0aaa"}, lambda m: 90),
    (GPU_UTIL, {"gpu": "1", "UUID": "GPU-a1", "Hostname": "node-a", "instance_id": "i-0aaa"}, lambda m: 30 + m % 2),
    (GPU_UTIL, {"gpu": "0", "UUID": "GPU-b0", "Hostname": "node-b"}, lambda m: 50),
    (ENGINE_ACTIVE, {"gpu": "0", "UUID": "GPU-b0", "Hostname": "node-b"}, lambda m: "0.4"),
    (
        GPU_UTIL,
        {"gpu": "0", "UUID": "GPU-c0", "Hostname": "node-c", "namespace": "train", "pod": "llm-7b-0"},
        lambda m: 70,
    ),
)
NODE_MAP = [ClusterNode("dcgm", "node-b", "i-0bbb", None, None)]


def openmetrics() -> str:
    lines = []
    for metric in (GPU_UTIL, ENGINE_ACTIVE):
        lines.append(f"# TYPE {metric} gauge")
        for name, labels, value in SERIES:
            if name != metric:
                continue
            text = ",".join(f'{key}="{label}"' for key, label in sorted(labels.items()))
            for minute in range(120):
                moment = START + timedelta(minutes=minute)
                lines.append(f"{metric}{{{text}}} {value(minute)} {int((moment - EPOCH).total_seconds())}")
    return "\n".join(lines) + "\n# EOF\n"


@pytest.fixture(scope="module")
def dcgm_url(prometheus_servers: PrometheusServers) -> str:
    return prometheus_servers.serve(openmetrics())


@pytest.fixture(scope="module")
def from_server(dcgm_url: str) -> list[GpuHour]:
    return gpu_hours(HttpPrometheus(dcgm_url), START, END - timedelta(minutes=1), 60, "instance_id", NODE_MAP)


def by_gpu_hour(read: list[GpuHour]) -> dict[tuple[str, int], tuple[int, Decimal, str | None, str | None]]:
    return {
        (gpu_hour.gpu, gpu_hour.hour.hour): (
            gpu_hour.samples,
            gpu_hour.utilization_sum,
            gpu_hour.resource_id,
            gpu_hour.job_id,
        )
        for gpu_hour in read
    }


def test_dcgm_series_become_each_gpus_hours(from_server: list[GpuHour]) -> None:
    assert by_gpu_hour(from_server) == {
        # 60 samples an hour at 0.90; GPU a1 alternates 30 % and 31 %: 30 × 0.30 + 30 × 0.31
        ("GPU-a0", 8): (60, Decimal("54.0"), "i-0aaa", None),
        ("GPU-a0", 9): (60, Decimal("54.0"), "i-0aaa", None),
        ("GPU-a1", 8): (60, Decimal("18.30"), "i-0aaa", None),
        ("GPU-a1", 9): (60, Decimal("18.30"), "i-0aaa", None),
        # the profiling metric, 0.4, not DCGM_FI_DEV_GPU_UTIL's 50 %; the host through the node map
        ("GPU-b0", 8): (60, Decimal("24.0"), "i-0bbb", None),
        ("GPU-b0", 9): (60, Decimal("24.0"), "i-0bbb", None),
        # no label or map names node-c's resource: the pod names the job holding the GPU
        ("GPU-c0", 8): (60, Decimal("42.0"), None, "train/llm-7b-0"),
        ("GPU-c0", 9): (60, Decimal("42.0"), None, "train/llm-7b-0"),
    }
    assert {gpu_hour.host for gpu_hour in from_server} == {"node-a", "node-b", "node-c"}


def test_saved_responses_and_a_configured_source_read_the_same(
    tmp_path: Path, dcgm_url: str, from_server: list[GpuHour]
) -> None:
    saved = tmp_path / "dcgm-saved"
    saved.mkdir()
    for metric in (GPU_UTIL, ENGINE_ACTIVE):
        response = requests.get(
            f"{dcgm_url}/api/v1/query_range",
            params={"query": metric, "start": to_unix(START), "end": to_unix(END), "step": 60},
            timeout=10,
        )
        (saved / f"{metric}.json").write_bytes(response.content)
    assert gpu_hours(SavedPrometheus(saved), START, END - timedelta(minutes=1), 60, "instance_id", NODE_MAP) == (
        from_server
    )
    (tmp_path / "nodes.csv").write_text("hostname,resource_id\nnode-b,i-0bbb\n")
    window = "start: 2026-11-02T08:00:00Z, end: 2026-11-02T09:59:00Z"
    config = load_config(
        write_config(
            tmp_path,
            "sources:\n"
            f"  - {{name: dcgm, kind: prometheus, url: '{dcgm_url}', hosts: {{csv: nodes.csv}}, {window}}}\n"
            f"  - {{name: dcgm-saved, kind: prometheus, path: dcgm-saved, {window}}}\n",
        )
    )
    by_source = {source.name: kind_of(source).telemetry(source, config.resolve) for source in config.sources}
    # `hosts: {csv: …}` resolves every series by its host; the default label leaves node-b to the
    # clusters' node maps (none here) and takes node-a's instance id from its label
    assert by_gpu_hour(by_source["dcgm"])[("GPU-a0", 8)][2] is None
    assert by_gpu_hour(by_source["dcgm"])[("GPU-b0", 8)][2] == "i-0bbb"
    assert by_gpu_hour(by_source["dcgm-saved"])[("GPU-a0", 8)][2] == "i-0aaa"
    assert by_gpu_hour(by_source["dcgm-saved"])[("GPU-b0", 8)][2] is None


def test_a_utilization_outside_its_range_names_the_series_the_time_and_the_metric(tmp_path: Path) -> None:
    body = {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [
                {
                    "metric": {"__name__": GPU_UTIL, "UUID": "GPU-x", "Hostname": "node-x"},
                    "values": [[to_unix(START), "90"], [to_unix(START) + 60, "101"]],
                }
            ],
        },
    }
    (tmp_path / f"{GPU_UTIL}.json").write_text(json.dumps(body))
    message = (
        'series DCGM_FI_DEV_GPU_UTIL{Hostname="node-x",UUID="GPU-x"}: the sample at 2026-11-02T08:01:00Z: '
        "DCGM_FI_DEV_GPU_UTIL is 101, outside 0 to 100"
    )
    with pytest.raises(SourceError, match=re.escape(message)):
        gpu_hours(SavedPrometheus(tmp_path), START, END, 60)


def test_an_unreachable_server_is_named() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(SourceError, match=rf"^Prometheus at {url} is unreachable for query '{ENGINE_ACTIVE}': "):
        gpu_hours(HttpPrometheus(url, timeout=5), START, END, 60)
