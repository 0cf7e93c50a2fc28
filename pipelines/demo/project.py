"""The demo project's layout and its `runledger.yaml`: where every file goes, relative to the project."""

from __future__ import annotations

from pathlib import Path

CONFIG_FILE_NAME = "runledger.yaml"
DEMO_FOLDER = Path(".runledger") / "demo"
AWS_EXPORT_FOLDER = DEMO_FOLDER / "aws" / "cur2-demo"
GCP_EXPORT_FOLDER = DEMO_FOLDER / "gcp"
RUNS_FILE = DEMO_FOLDER / "runs.yaml"
BUDGETS_FOLDER = DEMO_FOLDER / "budgets"
EVENTS_FOLDER = DEMO_FOLDER / "events"
EARLIER_WAREHOUSE_FILE = Path(".runledger") / "warehouse.duckdb"

CONFIG = {
    "warehouse": ".runledger/lake",
    "reports_dir": ".runledger/reports",
    "sources": [
        {"name": "aws-main", "kind": "aws_cur", "uri": AWS_EXPORT_FOLDER.as_posix()},
        {"name": "gcp-main", "kind": "gcp_billing", "path": GCP_EXPORT_FOLDER.as_posix()},
        {"name": "run-events", "kind": "run_events", "path": EVENTS_FOLDER.as_posix()},
    ],
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
}
CONFIG_HEADER = "# RunLedger demo project, written by `runledger demo`: paths are relative to this file.\n"
