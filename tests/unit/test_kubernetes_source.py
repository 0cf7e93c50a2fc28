"""The `kubernetes` source kind without a server: its settings, provider ids, the saved responses'
rules and errors (`tests/fixtures/kubernetes/`, saved from the real Prometheus of the integration
tests), a range split under Prometheus's points limit."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from decimal import Decimal
from itertools import pairwise
from pathlib import Path

import pytest
from pydantic import ValidationError

from connectors.errors import SourceError
from connectors.prometheus import MAX_POINTS_PER_SERIES, SavedPrometheus
from connectors.prometheus.http import chunks
from pipelines.config import load_config
from pipelines.config_rules import ConfigError
from pipelines.sources.kubernetes.provider_ids import resource_id
from pipelines.sources.kubernetes.reader import cluster_intervals
from pipelines.sources.kubernetes.settings import KubernetesSource
from tests.support import FIXTURES, kube_cluster, write_config

SAVED = FIXTURES / "kubernetes"
NOW = datetime(2026, 12, 7, 6, 0)


def settings(**keys: object) -> KubernetesSource:
    return KubernetesSource.model_validate({"name": "k8s", "kind": "kubernetes", "cluster": "gpu-prod", **keys})


def test_a_nightly_source_reads_the_35_days_before_the_run() -> None:
    source = settings(url="http://prometheus.monitoring:9090")
    assert (source.step, source.timeout, source.gpu_resource) == (60, 60, "nvidia_com_gpu")
    assert source.window(NOW) == (NOW - timedelta(days=35), NOW, True)
    assert settings(path="saved", lookback_days=7).window(NOW) == (NOW - timedelta(days=7), NOW, True)


def test_a_backfill_reads_its_start_to_its_end_or_to_the_run() -> None:
    source = settings(path="saved", start="2026-11-02T09:00:00+01:00", end="2026-11-02T14:00:00Z")
    assert source.window(NOW) == (datetime(2026, 11, 2, 8), datetime(2026, 11, 2, 14), False)
    assert settings(path="saved", start="2026-11-02T08:00:00Z").window(NOW) == (datetime(2026, 11, 2, 8), NOW, True)


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({}, "give exactly one of `url` (a Prometheus server) or `path` (saved responses)"),
        ({"url": "http://p:9090", "path": "saved"}, "give exactly one of `url`"),
        ({"url": "prometheus:9090"}, "url 'prometheus:9090' is not an http:// or https:// URL"),
        ({"path": "saved", "timeout": 5}, "`timeout` applies to `url` (a Prometheus server) only"),
        ({"path": "saved", "start": "2026-11-02T08:00:00Z", "lookback_days": 3}, "give `start` (with `end`) or"),
        ({"path": "saved", "end": "2026-11-02T08:00:00Z"}, "`end` needs a `start`"),
        ({"path": "saved", "start": "2026-11-02T08:00:00Z", "end": "2026-11-02T08:00:00Z"}, "is not before end"),
        ({"path": "saved", "gpu_resource": "nvidia.com/gpu"}, "`nvidia.com/gpu` is `nvidia_com_gpu`"),
        ({"path": "saved", "step": 0}, "greater than or equal to 1"),
        ({"path": "saved", "cluster": ""}, "at least 1 character"),
    ],
)
def test_settings_refuse_what_cannot_be_read(keys: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        settings(**keys)


def test_a_saved_folder_must_exist_when_the_configuration_loads(tmp_path: Path) -> None:
    text = "sources:\n  - {name: k8s, kind: kubernetes, cluster: gpu-prod, path: k8s-saved}\n"
    with pytest.raises(ConfigError, match=r"sources\[0\]\.path: .*k8s-saved does not exist"):
        load_config(write_config(tmp_path, text))


@pytest.mark.parametrize(
    ("provider_id", "expected"),
    [
        ("aws:///us-east-1a/i-0a1b2c3d4e5f60001", "i-0a1b2c3d4e5f60001"),
        ("aws://us-east-1a/i-0a1b2c3d4e5f60001", "i-0a1b2c3d4e5f60001"),
        ("gce://ml-train-prod/us-central1-a/gke-train-pool-7f3a-x2k9", "gke-train-pool-7f3a-x2k9"),
        (
            "azure:///subscriptions/0000/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/gpu-0",
            "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/gpu-0",
        ),
        ("kind://docker/kind/kind-worker", "kind://docker/kind/kind-worker"),
        ("", None),
    ],
)
def test_provider_ids_become_the_bills_resource_ids(provider_id: str, expected: str | None) -> None:
    assert resource_id(provider_id) == expected


def test_a_range_ending_at_the_run_leaves_running_pods_and_present_nodes_open() -> None:
    read = cluster_intervals(
        SavedPrometheus(SAVED), "gpu-prod", kube_cluster.START, kube_cluster.END, 60, open_ended=True
    )
    still_running = {interval.job_id for interval in read.intervals if interval.end is None}
    assert still_running == {"kube-system/kube-proxy-a"}
    assert {node.node: node.valid_to for node in read.nodes} == {
        "gpu-node-a": None,
        "gpu-node-b": datetime(2026, 11, 2, 12, 1),
    }


def test_saved_responses_answer_a_selector_within_the_range() -> None:
    saved = SavedPrometheus(SAVED)
    (series,) = saved.query_range(
        'kube_node_info{provider_id=~"gce://.*"}', datetime(2026, 11, 2, 10), datetime(2026, 11, 2, 11, 30), 60
    )
    assert series.labels["node"] == "gpu-node-b"
    times = [moment for moment, _ in series.samples]  # across the files .1 (to 10:59) and .2 (from 11:00)
    assert (len(times), times[0], times[-1]) == (91, datetime(2026, 11, 2, 10), datetime(2026, 11, 2, 11, 30))
    assert {value for _, value in series.samples} == {Decimal(1)}


def test_a_long_range_is_split_under_the_points_limit() -> None:
    start = datetime(2026, 11, 1)
    pieces = chunks(start, start + timedelta(days=35), 60)
    assert len(pieces) == 5
    assert pieces[0][0] == start and pieces[-1][1] == start + timedelta(days=35)
    for (_, before_end), (after_start, _) in pairwise(pieces):
        assert after_start - before_end == timedelta(seconds=60)
    assert max((end - begin) / timedelta(seconds=60) + 1 for begin, end in pieces) <= MAX_POINTS_PER_SERIES


def saved_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "saved"
    shutil.copytree(SAVED, folder)
    return folder


def read(folder: Path, query: str = "kube_node_info", step: int = 60) -> object:
    return SavedPrometheus(folder).query_range(query, kube_cluster.START, kube_cluster.END, step)


def test_a_malformed_saved_file_is_named(tmp_path: Path) -> None:
    folder = saved_copy(tmp_path)
    broken = folder / "kube_node_info.2.json"
    broken.write_text(broken.read_text()[:500])
    with pytest.raises(SourceError, match=rf"^{broken}: not JSON for query 'kube_node_info' \(Expecting"):
        read(folder)


def test_a_saved_error_body_is_shown(tmp_path: Path) -> None:
    folder = saved_copy(tmp_path)
    error = {"status": "error", "errorType": "bad_data", "error": "exceeded maximum resolution of 11,000 points"}
    (folder / "kube_node_info.2.json").write_text(json.dumps(error))
    with pytest.raises(SourceError) as raised:
        read(folder)
    assert str(raised.value) == (
        f"{folder / 'kube_node_info.2.json'}: Prometheus answered bad_data: exceeded maximum resolution of 11,000 "
        "points for query 'kube_node_info'"
    )


def test_a_saved_response_of_an_expression_without_metric_names_is_refused(tmp_path: Path) -> None:
    folder = saved_copy(tmp_path)
    file = folder / "kube_node_info.1.json"
    body = json.loads(file.read_text())
    for series in body["data"]["result"]:
        del series["metric"]["__name__"]
    file.write_text(json.dumps(body))
    with pytest.raises(SourceError, match=rf"^{file}: holds a series of 'no metric' .*save the response of the plain"):
        read(folder)


def test_a_metric_never_saved_is_named_with_the_files_to_save(tmp_path: Path) -> None:
    folder = saved_copy(tmp_path)
    for file in folder.glob("kube_pod_labels.*.json"):
        file.unlink()
    with pytest.raises(SourceError) as raised:
        cluster_intervals(SavedPrometheus(folder), "gpu-prod", kube_cluster.START, kube_cluster.END, 60)
    assert str(raised.value) == (
        f"{folder}: no saved response of kube_pod_labels for query 'kube_pod_labels': save the query_range "
        "response of kube_pod_labels as kube_pod_labels.json (or kube_pod_labels.<part>.json files)"
    )


def test_responses_saved_at_another_step_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"samples 0:01:00 apart .* not a multiple of the step 120 s: save it with"):
        read(SAVED, step=120)
    with pytest.raises(
        SourceError, match=r"saved responses answer series selectors .* only, not 'sum\(kube_pod_info\)'"
    ):
        read(SAVED, query="sum(kube_pod_info)")
    with pytest.raises(SourceError, match=rf"^{tmp_path / 'missing'}: not a folder of saved Prometheus responses"):
        read(tmp_path / "missing")


def test_a_request_in_an_unknown_unit_is_refused(tmp_path: Path) -> None:
    folder = saved_copy(tmp_path)
    for file in folder.glob("kube_pod_container_resource_requests.*.json"):
        file.write_text(file.read_text().replace('"unit":"core"', '"unit":"millicore"'))
    with pytest.raises(
        SourceError, match=r"cpu requested in unit 'millicore', expected 'core' \(kube-state-metrics v2\)"
    ):
        cluster_intervals(SavedPrometheus(folder), "gpu-prod", kube_cluster.START, kube_cluster.END, 60)


def test_pods_without_their_phases_are_refused_rather_than_read_as_idle(tmp_path: Path) -> None:
    folder = saved_copy(tmp_path)
    for file in folder.glob("kube_pod_status_phase.*.json"):
        file.write_text('{"status":"success","data":{"resultType":"matrix","result":[]}}')
    with pytest.raises(SourceError, match=rf"^{folder}: kube_pod_info has series but kube_pod_status_phase none"):
        cluster_intervals(SavedPrometheus(folder), "gpu-prod", kube_cluster.START, kube_cluster.END, 60)
