"""The demo project's layout and its `runledger.yaml`: where every file goes, relative to the project."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from pipelines.demo.aws.export import AWS_DATA_END
from pipelines.demo.gcp.export import GCP_DATA_END
from pipelines.demo.story.p5_cluster import CLUSTER

CONFIG_FILE_NAME = "runledger.yaml"
DEMO_FOLDER = Path(".runledger") / "demo"
AWS_EXPORT_FOLDER = DEMO_FOLDER / "aws" / "cur2-demo"
GCP_EXPORT_FOLDER = DEMO_FOLDER / "gcp"
RUNS_FILE = DEMO_FOLDER / "runs.yaml"
BUDGETS_FOLDER = DEMO_FOLDER / "budgets"
EVENTS_FOLDER = DEMO_FOLDER / "events"
SLURM_FOLDER = DEMO_FOLDER / "slurm" / CLUSTER
SACCT_FILE = SLURM_FOLDER / "sacct.json"
NODE_MAP_FILE = SLURM_FOLDER / "nodes.csv"
DCGM_FOLDER = DEMO_FOLDER / "prometheus" / "dcgm"
DCGM_FILE = DCGM_FOLDER / "DCGM_FI_DEV_GPU_UTIL.json"
EARLIER_WAREHOUSE_FILE = Path(".runledger") / "warehouse.duckdb"
# The demo's "now", which its freshness checks are judged at: the nightly run (06:00 UTC) the
# morning its exports end, whatever the clock says.
NIGHTLY_RUN_AFTER = timedelta(hours=6)
AS_OF = max(AWS_DATA_END, GCP_DATA_END) + NIGHTLY_RUN_AFTER


def demo_config() -> dict:
    """The demo's `runledger.yaml`: its AWS and GCP exports, run events, its cluster's Slurm
    accounting and the 7B run's GPU telemetry (saved DCGM exporter responses)."""
    sources = [
        {"name": "aws-main", "kind": "aws_cur", "uri": AWS_EXPORT_FOLDER.as_posix()},
        {"name": "gcp-main", "kind": "gcp_billing", "path": GCP_EXPORT_FOLDER.as_posix()},
        {"name": "run-events", "kind": "run_events", "path": EVENTS_FOLDER.as_posix()},
        {
            "name": "slurm-p5",
            "kind": "slurm",
            "path": SACCT_FILE.as_posix(),
            "cluster": CLUSTER,
            "nodes": NODE_MAP_FILE.as_posix(),
        },
        {
            "name": "dcgm",
            "kind": "prometheus",
            "path": DCGM_FOLDER.as_posix(),
            "start": "2026-10-01T00:00:00Z",
            "end": "2026-12-01T00:00:00Z",
            "step": 900,
        },
    ]
    return {
        "warehouse": ".runledger/lake",
        "reports_dir": ".runledger/reports",
        "sources": sources,
        "attribution": {
            "dimensions": {
                "training_run": ["training_run", "training-run", "TrainingRun", "run_id"],
                "experiment": ["experiment"],
                "dataset_version": ["dataset_version", "dataset"],
                "owner": ["owner", "team"],
            },
            "runs": RUNS_FILE.as_posix(),
        },
        "budgets": BUDGETS_FOLDER.as_posix(),
        "orchestration": {"freshness_as_of": f"{AS_OF:%Y-%m-%dT%H:%M:%SZ}"},
    }


CONFIG = demo_config()
CONFIG_HEADER = "# RunLedger demo project, written by `runledger demo`: paths are relative to this file.\n"
