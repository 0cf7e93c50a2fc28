"""The `prometheus` telemetry source without a server: its settings, its host mapping, the
thresholds of the telemetry alerts, and the GPU-hours of saved responses (the real server's
tests are tests/integration/test_gpu_telemetry.py)."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest
from pydantic import ValidationError

from connectors.prometheus import SavedPrometheus
from connectors.prometheus.series import to_unix
from pipelines.plans.settings import AlertThresholds
from pipelines.sources.intervals import ClusterNode
from pipelines.sources.prometheus.reader import ENGINE_ACTIVE, GPU_UTIL, gpu_hours
from pipelines.sources.prometheus.settings import HostLabel, HostMap, PrometheusSource

pytestmark = pytest.mark.unit

START = datetime(2026, 11, 2, 8)


def settings(**keys: object) -> PrometheusSource:
    return PrometheusSource.model_validate({"name": "dcgm", "kind": "prometheus", **keys})


def test_a_series_names_its_machine_by_the_instance_id_label_unless_told_otherwise() -> None:
    assert settings(url="http://p:9090").hosts == HostLabel(label="instance_id")
    assert settings(path="saved", hosts={"label": "ec2_instance"}).hosts == HostLabel(label="ec2_instance")
    assert settings(path="saved", hosts={"csv": "gpu-nodes.csv"}).hosts == HostMap(csv="gpu-nodes.csv")
    with pytest.raises(ValidationError, match="'instance-id' is not a Prometheus label name"):
        settings(path="saved", hosts={"label": "instance-id"})
    with pytest.raises(ValidationError, match="give exactly one of `url`"):
        settings()


def test_the_telemetry_alerts_have_their_defaults_and_refuse_inverted_levels() -> None:
    defaults = AlertThresholds()
    assert (defaults.low_gpu_utilization.warning, defaults.low_gpu_utilization.over) == (Decimal("0.5"), Decimal("0.3"))
    assert (defaults.data_loading_share.warning, defaults.data_loading_share.over) == (Decimal("0.15"), Decimal("0.30"))
    assert defaults.low_gpu_utilization.hours == defaults.data_loading_share.hours == 2
    with pytest.raises(ValidationError, match=r"must be at most warning \(0.5\): over is the lower utilization"):
        AlertThresholds.model_validate({"low_gpu_utilization": {"warning": 0.5, "over": 0.6}})
    with pytest.raises(ValidationError, match="hours"):
        AlertThresholds.model_validate({"data_loading_share": {"hours": 0}})


def saved(folder: Path, metric: str, series: list[tuple[dict[str, str], list[str]]]) -> None:
    result = [
        {
            "metric": {"__name__": metric, **labels},
            "values": [[to_unix(START) + 900 * index, value] for index, value in enumerate(values)],
        }
        for labels, values in series
    ]
    body = {"status": "success", "data": {"resultType": "matrix", "result": result}}
    (folder / f"{metric}.json").write_text(json.dumps(body))


def test_a_gpu_hour_takes_the_profiling_metric_where_the_gpu_has_it(tmp_path: Path) -> None:
    gpu_a = {"UUID": "GPU-a", "Hostname": "node-a", "instance_id": "i-0a"}
    gpu_b = {"UUID": "GPU-b", "Hostname": "node-b"}
    saved(tmp_path, GPU_UTIL, [(gpu_a, ["90", "80", "70", "60", "50"]), (gpu_b, ["40", "40", "40", "40"])])
    saved(tmp_path, ENGINE_ACTIVE, [(gpu_a, ["0.5", "0.5", "0.5", "0.5"])])  # 08:00 only
    read = gpu_hours(SavedPrometheus(tmp_path), START, datetime(2026, 11, 2, 9), 900, node_map=[
        ClusterNode("dcgm", "node-b", "i-0b", None, datetime(2026, 11, 2, 8, 30)),
    ])  # fmt: skip
    shown = [(h.gpu, h.hour.hour, h.samples, h.utilization_sum, h.resource_id) for h in read]
    assert shown == [
        ("GPU-a", 8, 4, Decimal("2.0"), "i-0a"),  # the engine's 0.5, not 90 % to 60 %
        ("GPU-a", 9, 1, Decimal("0.5"), "i-0a"),  # no engine sample at 09:00: 50 %
        # node-b's map ends at 08:30: its later samples name no resource
        ("GPU-b", 8, 2, Decimal("0.8"), "i-0b"),
        ("GPU-b", 8, 2, Decimal("0.8"), None),
    ]
