"""The demo's shared Slurm cluster `p5-cluster`: its nodes' untagged CUR lines, its `sacct --json`
accounting (Slurm 22.05) and node map, and the figures docs/demo.md checks by hand."""

from __future__ import annotations

import csv
import fnmatch
import json
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import hostlist
import pyarrow.parquet as pq
import pytest
import yaml

from pipelines.demo import write_demo
from pipelines.demo.story.registry import RUN_REGISTRY

SLURM_FOLDER = Path(".runledger/demo/slurm/p5-cluster")
CLUSTER_START = datetime(2026, 11, 17)
CLUSTER_END = datetime(2026, 11, 20)  # the nodes' last billed hour ends here
GPUS_PER_NODE = 8
P5_HOURLY = Decimal("55.04")
QUARTER = timedelta(minutes=15)
EXISTING_RUNS = {"llm-7b-pt-r1", "llm-13b-ft-r2", "llm-3b-pt-gcp"}


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo")
    write_demo(root)
    return root


def _sacct(root: Path) -> dict:
    return json.loads((root / SLURM_FOLDER / "sacct.json").read_text())


def _moment(epoch: int) -> datetime:
    return datetime.fromtimestamp(epoch, UTC).replace(tzinfo=None)


def _intervals(sacct: dict) -> list[tuple[str, str, int, datetime, datetime, dict[str, str]]]:
    """(job id, host, GPUs, start, end, comment labels) per record and node; a running job ends
    at the nodes' last billed hour."""
    intervals = []
    for job in sacct["jobs"]:
        hosts = hostlist.expand_hostlist(job["nodes"])
        (gpus,) = [
            tres["count"] for tres in job["tres"]["allocated"] if (tres["type"], tres["name"]) == ("gres", "gpu")
        ]
        end = _moment(job["time"]["end"]) if job["time"]["end"] else CLUSTER_END
        pairs = job["comment"]["job"].replace(",", " ").split()
        labels = dict(pair.split("=", 1) for pair in pairs)
        intervals += [
            (str(job["job_id"]), host, gpus // len(hosts), _moment(job["time"]["start"]), end, labels) for host in hosts
        ]
    return intervals


def _held_by_quarter(sacct: dict) -> dict[tuple[str, datetime], int]:
    held: dict[tuple[str, datetime], int] = defaultdict(int)
    for _, host, gpus, start, end, _ in _intervals(sacct):
        moment = start
        while moment < end:
            held[(host, moment)] += gpus
            moment += QUARTER
    return held


def test_sacct_is_slurm_22_05_json_with_a_requeue_a_two_node_job_and_a_running_one(demo_root: Path) -> None:
    sacct = _sacct(demo_root)
    assert sacct["meta"]["plugin"]["type"] == "openapi/dbv0.0.38"
    assert sacct["meta"]["Slurm"]["release"] == "22.05.8" and sacct["errors"] == []
    jobs = sacct["jobs"]
    assert len(jobs) == 25 and len({job["job_id"] for job in jobs}) == 24
    requeued = [job for job in jobs if job["job_id"] == 4109]
    assert [job["state"]["current"] for job in requeued] == ["REQUEUED", "COMPLETED"]
    assert requeued[0]["time"]["start"] < requeued[0]["time"]["end"] <= requeued[1]["time"]["start"]
    (two_nodes,) = [job for job in jobs if job["allocation_nodes"] == 2]
    assert two_nodes["nodes"] == "p5-[003-004]"
    assert {"type": "gres", "name": "gpu", "id": 1001, "count": 16} in two_nodes["tres"]["allocated"]
    (running,) = [job for job in jobs if job["state"]["current"] == "RUNNING"]
    assert running["time"]["end"] == 0 and _moment(running["time"]["start"]) == datetime(2026, 11, 19, 15)
    mid_hour = [
        job
        for job in jobs
        if _moment(job["time"]["start"]).minute and job["time"]["end"] and _moment(job["time"]["end"]).minute
    ]
    assert {(_moment(job["time"]["start"]).hour, _moment(job["time"]["end"]).hour) for job in mid_hour} >= {(10, 13)}


def test_jobs_name_new_runs_by_comment_and_never_overfill_a_node(demo_root: Path) -> None:
    sacct = _sacct(demo_root)
    intervals = _intervals(sacct)
    runs = {labels["training_run"] for *_, labels in intervals}
    assert "eval-7b-ckpts" in runs and len([run for run in runs if run.startswith("lr-sweep-1b-lr")]) == 13
    assert not runs & EXISTING_RUNS
    assert {labels["owner"] for *_, labels in intervals} == {"dana", "erin"}
    assert {host for _, host, *_ in intervals} == {"p5-001", "p5-002", "p5-003", "p5-004"}
    assert all(2 <= gpus <= GPUS_PER_NODE for _, _, gpus, *_ in intervals)
    assert max(_held_by_quarter(sacct).values()) == GPUS_PER_NODE
    assert all(start.minute % 15 == 0 and end.minute % 15 == 0 for *_, start, end, _ in intervals)


def test_the_hand_computed_figures_of_docs_demo_md(demo_root: Path) -> None:
    """Capacity, allocated and idle GPU-hours and idle cost per day; every GPU-hour costs 55.04 / 8."""
    held = _held_by_quarter(_sacct(demo_root))
    per_gpu_hour = P5_HOURLY / GPUS_PER_NODE
    figures = {}
    for day in (date(2026, 11, 17), date(2026, 11, 18), date(2026, 11, 19)):
        allocated = sum(Decimal(gpus) / 4 for (_, moment), gpus in held.items() if moment.date() == day)
        capacity = Decimal(4 * GPUS_PER_NODE * 24)
        figures[day] = (
            allocated,
            capacity - allocated,
            round(allocated / capacity, 3),
            (capacity - allocated) * per_gpu_hour,
        )
    assert figures == {
        date(2026, 11, 17): (Decimal("471.5"), Decimal("296.5"), Decimal("0.614"), Decimal("2039.92")),
        date(2026, 11, 18): (Decimal(544), Decimal(224), Decimal("0.708"), Decimal("1541.12")),
        date(2026, 11, 19): (Decimal(499), Decimal(269), Decimal("0.650"), Decimal("1850.72")),
    }


def test_the_nodes_are_billed_hourly_on_demand_untagged_and_outside_the_registry(demo_root: Path) -> None:
    nodes = list(csv.DictReader((demo_root / SLURM_FOLDER / "nodes.csv").open()))
    assert [node["hostname"] for node in nodes] == ["p5-001", "p5-002", "p5-003", "p5-004"]
    assert {(node["start"], node["end"]) for node in nodes} == {("2026-11-17T00:00:00Z", "2026-11-20T00:00:00Z")}
    instances = {node["resource_id"] for node in nodes}
    patterns = [pattern for run in RUN_REGISTRY for pattern in run["resources"]]
    assert not [(i, p) for i in instances for p in patterns if fnmatch.fnmatchcase(i, p)]
    manifest = demo_root / ".runledger/demo/aws/cur2-demo/metadata/BILLING_PERIOD=2026-11/cur2-demo-Manifest.json"
    files = [
        demo_root / ".runledger/demo/aws/cur2-demo/data" / uri.split("/data/", 1)[1]
        for uri in json.loads(manifest.read_text())["dataFiles"]
    ]
    rows = [
        row for file in files for row in pq.read_table(file).to_pylist() if row["line_item_resource_id"] in instances
    ]
    assert len(rows) == 4 * 72
    assert {
        (row["line_item_line_item_type"], row["product_instance_type"], row["line_item_unblended_cost"]) for row in rows
    } == {("Usage", "p5.48xlarge", 55.04)}
    assert all(row["resource_tags"] == [] for row in rows)
    assert min(row["line_item_usage_start_date"] for row in rows) == CLUSTER_START
    assert max(row["line_item_usage_end_date"] for row in rows) == CLUSTER_END


def test_the_slurm_source_names_the_written_files(demo_root: Path) -> None:
    config = yaml.safe_load((demo_root / "runledger.yaml").read_text())
    (slurm,) = [source for source in config["sources"] if source["kind"] == "slurm"]
    assert slurm["name"] == "slurm-p5" and slurm["cluster"] == "p5-cluster"
    assert (demo_root / slurm["path"]).is_file() and (demo_root / slurm["nodes"]).is_file()


def test_the_demo_cut_mid_cluster_has_the_jobs_started_by_then_still_running(tmp_path: Path) -> None:
    cut = datetime(2026, 11, 18, 12)
    write_demo(tmp_path, data_end=cut)
    jobs = _sacct(tmp_path)["jobs"]
    assert all(_moment(job["time"]["start"]) < cut for job in jobs) and len(jobs) == 16
    running = [job for job in jobs if job["state"]["current"] == "RUNNING"]
    assert all(job["time"]["end"] == 0 for job in running)
    assert {job["job_id"] for job in running} == {4109, 4110, 4111, 4113, 4115}
