"""Synthetic CUR 2.0 Data Exports for the bench, written by DuckDB in batches (no Python per row).

A data set of N line items is two billing periods (2026-10 and 2026-11) of N/2 rows each, in the
layout of `connectors.aws.exports`: `<export>/data/BILLING_PERIOD=YYYY-MM/<execution>/*.parquet` and
`<export>/metadata/BILLING_PERIOD=YYYY-MM/<name>-Manifest.json`, plus a run registry (globs that
claim 20 % of the resources), a shared-cost rule for tax, budgets and `runledger.yaml`. Data sets
are cached under `.bench-data/<size>-g<GENERATOR_VERSION>/` and reused while the generator
version stays the same; a data set is complete once its `COMPLETE` marker exists.
"""

from __future__ import annotations

import calendar
import json
import shutil
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from bench.sqlfiles import read_bench_sql

GENERATOR_VERSION = 1
SEED = 20261130
BILLING_PERIODS = (date(2026, 10, 1), date(2026, 11, 1))
RESOURCES = 50_000
RUNS = 200
REGISTRY_RUNS = 20
ROWS_PER_FILE = 1_000_000
ROWS_PER_BATCH = 250_000
EXPORT_NAME = "cur2-bench"
EXPORT_S3_PREFIX = f"s3://runledger-bench-billing/cur/{EXPORT_NAME}"
EXPORT_ARN = (
    f"arn:aws:bcm-data-exports:us-east-1:111122223333:export/{EXPORT_NAME}-00000000-0000-4000-8000-000000000009"
)
SOURCE_NAME = "aws-bench"
COMPLETE_MARKER = "COMPLETE"
REDELIVERY_FOLDER = "redelivery"
# The re-delivered month draws other usage: a seed this far from the first delivery's.
REDELIVERY_SEED_OFFSET = 1000
MANIFEST_TYPE_NAMES = {
    pa.string(): "string",
    pa.float64(): "double",
    pa.timestamp("us"): "timestamp",
    pa.map_(pa.string(), pa.string()): "map<string,string>",
    pa.map_(pa.string(), pa.float64()): "map<string,double>",
}


@dataclass(frozen=True)
class BenchDataSet:
    """A generated data set.

    Attributes:
        rows: line items in all billing periods together.
        runs: training runs the resources are used by.
        root: the data set's folder.
        config_path: its `runledger.yaml` (warehouse and reports under `run/` beside it).
        export_root: the CUR 2.0 export (`data/`, `metadata/`).
        data_files: every Parquet data file, both periods.
    """

    rows: int
    runs: int
    root: Path
    config_path: Path
    export_root: Path
    data_files: tuple[Path, ...]

    @property
    def last_period(self) -> date:
        return BILLING_PERIODS[-1]

    def period_files(self, period: date) -> tuple[Path, ...]:
        """The data files of one billing period's delivery."""
        return tuple(path for path in self.data_files if f"BILLING_PERIOD={period:%Y-%m}" in path.parts)


@dataclass(frozen=True)
class Redelivery:
    """The last billing period delivered again, as AWS re-delivers the current month every day:
    a new execution with new data files (other usage drawn) and a manifest naming them.

    Attributes:
        export_root: the re-delivered period's `data/` and `metadata/` folders.
        rows: its line items.
        data_files: its Parquet data files.
    """

    export_root: Path
    rows: int
    data_files: tuple[Path, ...]


def parse_size(text: str) -> int:
    """`10k`, `1M`, `20M` or a plain integer as a number of line items.

    Raises:
        ValueError: the text is not a positive size.
    """
    cleaned = text.strip().upper()
    multiplier = {"K": 1_000, "M": 1_000_000}.get(cleaned[-1:], 1)
    digits = cleaned[:-1] if multiplier > 1 else cleaned
    if not digits.isdigit() or int(digits) == 0:
        raise ValueError(f"{text!r} is not a size such as 10k, 1M or 20M")
    return int(digits) * multiplier


def size_label(rows: int) -> str:
    """20000000 → `20M`, 2500000 → `2.5M`, 10000 → `10k`."""
    if rows % 1_000_000 == 0:
        return f"{rows // 1_000_000}M"
    if rows > 1_000_000 and rows % 100_000 == 0:
        return f"{rows / 1_000_000:g}M"
    if rows % 1_000 == 0:
        return f"{rows // 1_000}k"
    return str(rows)


def data_set(cache_dir: Path, rows: int, runs: int = RUNS) -> BenchDataSet:
    """The data set of `rows` line items, generated unless the cache already holds it.

    Args:
        cache_dir: the bench's data cache (`.bench-data/`).
        rows: line items in total; split evenly over the billing periods.
        runs: training runs the resources are used by (fewer make a quick smoke test: each run
            gets a report).
    """
    runs_suffix = "" if runs == RUNS else f"-{runs}runs"
    root = cache_dir / f"{size_label(rows)}{runs_suffix}-g{GENERATOR_VERSION}"
    if not (root / COMPLETE_MARKER).is_file():
        shutil.rmtree(root, ignore_errors=True)
        _generate(root, rows, runs)
        (root / COMPLETE_MARKER).write_text(f"{rows}\n")
    export_root = root / "export"
    return BenchDataSet(
        rows=rows,
        runs=runs,
        root=root,
        config_path=root / "runledger.yaml",
        export_root=export_root,
        data_files=tuple(sorted((export_root / "data").rglob("*.parquet"))),
    )


def redelivery(dataset: BenchDataSet) -> Redelivery:
    """The data set's last billing period re-delivered, generated once into the data set's folder."""
    root = dataset.root / REDELIVERY_FOLDER
    period = dataset.last_period
    rows = _period_rows(dataset.rows, len(BILLING_PERIODS) - 1)
    if not (root / COMPLETE_MARKER).is_file():
        shutil.rmtree(root, ignore_errors=True)
        conn = duckdb.connect(config={"python_enable_replacements": False})
        try:
            _write_period(conn, root, period, rows, dataset.runs, delivery=1)
        finally:
            conn.close()
        (root / COMPLETE_MARKER).write_text(f"{rows}\n")
    return Redelivery(export_root=root, rows=rows, data_files=tuple(sorted((root / "data").rglob("*.parquet"))))


def _period_rows(rows: int, index: int) -> int:
    return rows // len(BILLING_PERIODS) + (1 if index < rows % len(BILLING_PERIODS) else 0)


def _generate(root: Path, rows: int, runs: int) -> None:
    export_root = root / "export"
    conn = duckdb.connect(config={"python_enable_replacements": False})
    try:
        for index, period in enumerate(BILLING_PERIODS):
            _write_period(conn, export_root, period, _period_rows(rows, index), runs)
    finally:
        conn.close()
    _write_registry(root / "runs.yaml", min(REGISTRY_RUNS, runs))
    _write_budgets(root / "budgets", runs)
    _write_config(root / "runledger.yaml")


def _period_bounds(period: date) -> tuple[datetime, datetime, int]:
    days = calendar.monthrange(period.year, period.month)[1]
    start = datetime(period.year, period.month, 1)
    end = datetime(period.year + period.month // 12, period.month % 12 + 1, 1)
    return start, end, days * 24


def _write_period(
    conn: duckdb.DuckDBPyConnection, export_root: Path, period: date, period_rows: int, runs: int, delivery: int = 0
) -> None:
    """The period's data files (ROWS_PER_FILE rows each) and its manifest; `delivery` 1 is the
    period delivered again (another execution, other usage)."""
    start, end, hours = _period_bounds(period)
    partition = f"BILLING_PERIOD={period:%Y-%m}"
    execution_id = f"00000000-0000-4000-8000-{period:%Y%m}{delivery:06d}"
    execution_folder = f"{end:%Y%m%d}T031500Z-{execution_id}"
    folder = export_root / "data" / partition / execution_folder
    folder.mkdir(parents=True, exist_ok=True)
    names: list[str] = []
    schema = None
    for file_index, first_row in enumerate(range(0, period_rows, ROWS_PER_FILE)):
        name = f"{EXPORT_NAME}-{file_index + 1:05d}.snappy.parquet"
        params = {
            "seed": SEED + period.month + delivery * REDELIVERY_SEED_OFFSET,
            "resources": RESOURCES,
            "runs": runs,
            "period_rows": period_rows,
            "hours_in_period": hours,
            "first_row": first_row,
            "last_row": min(first_row + ROWS_PER_FILE, period_rows),
            "period_start": start,
            "period_end": end,
            "period_key": f"{period:%Y%m}",
        }
        reader = conn.execute(read_bench_sql("generate_cur2"), params).to_arrow_reader(ROWS_PER_BATCH)
        schema = reader.schema
        with pq.ParquetWriter(folder / name, schema, compression="snappy", version="2.6") as writer:
            for batch in reader:
                writer.write_batch(batch)
        names.append(name)
    _write_manifest(
        export_root / "metadata" / partition / f"{EXPORT_NAME}-Manifest.json",
        execution_id,
        [f"{EXPORT_S3_PREFIX}/data/{partition}/{execution_folder}/{name}" for name in names],
        schema,
    )


def _write_manifest(path: Path, execution_id: str, data_uris: list[str], schema: pa.Schema) -> None:
    manifest = {
        "executionId": execution_id,
        "exportArn": EXPORT_ARN,
        "columns": [
            {"name": field.name, "type": MANIFEST_TYPE_NAMES.get(field.type, str(field.type))} for field in schema
        ],
        "dataFiles": data_uris,
        "additionalOutputFiles": [],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest, indent=2) + "\n")


def _write_registry(path: Path, registered: int) -> None:
    """The first `registered` runs registered with globs on their resources' names, over both
    periods: they claim the resources without a training-run tag."""
    runs = [
        {
            "id": f"registered-run-{number:03d}",
            "experiment": f"exp-{number // 4}",
            "dataset_version": f"dataset-v{number % 13}",
            "owner": f"team-{number % 17}",
            "start": datetime(2026, 10, 1),
            "end": datetime(2026, 12, 1),
            "resources": [f"i-{number:03d}x*", f"vol-{number:03d}x*"],
            "weight": 1,
        }
        for number in range(registered)
    ]
    path.write_text(yaml.safe_dump({"runs": runs}, sort_keys=False))


def _write_budgets(folder: Path, runs: int) -> None:
    """Budgets for every twentieth run."""
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(0, runs, 20):
        run = f"run-{number:03d}"
        budget = {
            "training_run": run,
            "currency": "USD",
            "window": {"start": date(2026, 10, 1), "end": date(2026, 12, 1)},
            "model": {
                "parameters": 7.0e9,
                "tokens": 2.0e11,
                "gpu_peak_tflops": 989,
                "mfu": 0.40,
                "overhead": 0.10,
                "gpus": 64,
                "gpu_hour_price": 12.29,
            },
            "storage": {"checkpoint_gb": 98, "checkpoints_retained": 5, "dataset_gb": 2000, "price_gb_month": 0.023},
            "network": {"egress_gb": 500, "price_gb": 0.02},
            "thresholds": {"warning": 0.8, "over": 1.0},
        }
        (folder / f"{run}.yaml").write_text(yaml.safe_dump(budget, sort_keys=False))


def _write_config(path: Path) -> None:
    config = {
        "warehouse": "run/lake",
        "reports_dir": "run/reports",
        "sources": [{"name": SOURCE_NAME, "kind": "aws_cur", "uri": "export"}],
        "attribution": {
            "dimensions": {
                "training_run": ["training_run"],
                "experiment": ["experiment"],
                "dataset_version": ["dataset_version"],
                "owner": ["owner"],
            },
            "runs": "runs.yaml",
            "shared": [{"name": "tax", "match": {"ChargeCategory": "Tax"}, "split": "proportional"}],
        },
        "budgets": "budgets",
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
