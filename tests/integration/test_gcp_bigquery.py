"""The GCP billing export read from a real BigQuery emulator by the real google-cloud-bigquery
code: a first load, late rows for an earlier day and the previous invoice month, a re-run with
nothing new, a partial run, a full refresh from the CLI, and an older table without the newer
columns. Expected totals are summed here from the rows written, with Decimal."""

from __future__ import annotations

import re
import uuid
from collections import defaultdict
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from connectors.errors import SourceError
from connectors.gcp.billing_export import BigQueryBillingExport
from pipelines.cli import main
from pipelines.config import load_config
from pipelines.ingest.readers import reader_for
from pipelines.nightly import run_nightly
from pipelines.sources.registry import column_drift
from tests.support import write_config
from tests.support.bigquery_emulator import (
    DETAILED_EXPORT_SCHEMA,
    OLD_STANDARD_EXPORT_SCHEMA,
    PROJECT,
    append_rows,
    create_export_table,
)
from tests.support.lake import lake_of, reading

GPU = ("Compute Engine", "9A2B-73C1-4E5D", "Nvidia H100 80GB GPU running in Americas")
CORE = ("Compute Engine", "3C8E-91F4-A6B2", "A3 Instance Core running in Americas")
STORAGE = ("Cloud Storage", "0D5D-6E23-4250", "Standard Storage US Multi-region")
TAX = ("Invoice", "B1C4-83A9-0001", "Sales tax")


@pytest.fixture(autouse=True)
def _no_metadata_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_GCE_CHECK", "true")


def export_row(
    sku: tuple[str, str, str],
    usage_start: str,
    export_time: str,
    cost: float,
    *,
    invoice_month: str | None = None,
    credits: tuple[tuple[str, float], ...] = (),
    cost_type: str = "regular",
    labels: dict[str, str] | None = None,
    usage_seconds: float = 3600.0,
    adjustment_info: dict | None = None,
) -> dict:
    """One detailed export row as Google writes it (an hour of usage from `usage_start`)."""
    service, sku_id, description = sku
    start = datetime.fromisoformat(usage_start)
    return {
        "billing_account_id": "01A2B3-C4D5E6-F7A8B9",
        "service": {"id": service[:4].upper(), "description": service},
        "sku": {"id": sku_id, "description": description},
        "usage_start_time": f"{start:%Y-%m-%d %H:%M:%S} UTC",
        "usage_end_time": f"{start.replace(minute=59, second=59):%Y-%m-%d %H:%M:%S} UTC",
        "project": {
            "id": "ml-train-prod",
            "number": "482910375566",
            "name": "ml-train-prod",
            "labels": [{"key": "team", "value": "ml-platform"}],
        },
        "labels": [{"key": k, "value": v} for k, v in (labels or {}).items()],
        "system_labels": [{"key": "compute.googleapis.com/machine_spec", "value": "a3-highgpu-8g"}],
        "location": {"location": "us-central1-a", "country": "US", "region": "us-central1", "zone": "us-central1-a"},
        "resource": {
            "name": "llm-3b-train-0",
            "global_name": "//compute.googleapis.com/projects/ml-train-prod/zones/us-central1-a/instances/7234001",
        },
        "export_time": export_time,
        "cost": cost,
        "currency": "USD",
        "currency_conversion_rate": 1.0,
        "usage": {
            "amount": usage_seconds,
            "unit": "seconds",
            "amount_in_pricing_units": usage_seconds / 3600,
            "pricing_unit": "hour",
        },
        "credits": [
            {
                "name": f"{kind} credit",
                "amount": amount,
                "full_name": f"{kind} credit",
                "id": kind.lower(),
                "type": kind,
            }
            for kind, amount in credits
        ],
        "invoice": {"month": invoice_month or f"{start:%Y%m}"},
        "cost_type": cost_type,
        "adjustment_info": adjustment_info,
        "cost_at_list": cost,
        "transaction_type": "GOOGLE",
        "seller_name": "Google",
    }


FIRST_EXPORT = [
    export_row(
        GPU,
        "2026-10-30T10:00:00",
        "2026-10-30 14:12:09.482113 UTC",
        78.372,
        credits=(("COMMITTED_USAGE_DISCOUNT", -28.99764),),
        labels={"training-run": "llm-3b-pt-gcp"},
        usage_seconds=28800,
    ),
    export_row(
        CORE, "2026-10-30T10:00:00", "2026-10-30 14:12:09.482113 UTC", 6.136, labels={"training-run": "llm-3b-pt-gcp"}
    ),
    export_row(
        GPU,
        "2026-10-31T22:00:00",
        "2026-11-01 03:40:00.000001 UTC",
        78.372,
        credits=(("COMMITTED_USAGE_DISCOUNT", -28.99764),),
        labels={"training-run": "llm-3b-pt-gcp"},
        usage_seconds=28800,
    ),
    export_row(
        STORAGE,
        "2026-11-02T08:00:00",
        "2026-11-02 16:00:00 UTC",
        1.234567,
        credits=(("FREE_TIER", -0.5), ("PROMOTION", -0.1)),
    ),
    export_row(
        GPU,
        "2026-11-03T09:00:00",
        "2026-11-03 15:31:02.5 UTC",
        78.372,
        credits=(("COMMITTED_USAGE_DISCOUNT", -28.99764),),
        labels={"training-run": "llm-3b-pt-gcp"},
        usage_seconds=28800,
    ),
    export_row(
        TAX,
        "2026-10-01T07:00:00",
        "2026-11-04 10:04:12.331907 UTC",
        8.42,
        invoice_month="202610",
        cost_type="tax",
        usage_seconds=0,
    ),
]
# Exported later: usage of an earlier November day, and a correction for the October invoice.
LATE_EXPORT = [
    export_row(
        CORE, "2026-11-03T09:00:00", "2026-11-06 05:12:09.100000 UTC", 6.136, labels={"training-run": "llm-3b-pt-gcp"}
    ),
    export_row(
        GPU,
        "2026-10-31T22:00:00",
        "2026-11-06 05:12:09.482113 UTC",
        -9.7965,
        invoice_month="202610",
        cost_type="adjustment",
        usage_seconds=0,
        adjustment_info={
            "id": "adj-1",
            "description": "Usage correction",
            "mode": "PARTIAL_CORRECTION",
            "type": "USAGE_CORRECTION",
        },
    ),
]


def expected_totals(rows: list[dict]) -> dict[str, tuple[int, Decimal]]:
    """Rows and Σ cost + Σ credits per invoice month (YYYY-MM), from the row values' text."""
    totals: dict[str, list] = defaultdict(lambda: [0, Decimal(0)])
    for row in rows:
        month = f"{row['invoice']['month'][:4]}-{row['invoice']['month'][4:]}"
        totals[month][0] += 1
        totals[month][1] += Decimal(str(row["cost"])) + sum(
            (Decimal(str(c["amount"])) for c in row["credits"]), Decimal(0)
        )
    return {month: (rows, total) for month, (rows, total) in totals.items()}


def loaded_totals(warehouse: Path, source: str) -> dict[str, tuple[int, Decimal]]:
    with reading(warehouse) as conn:
        rows = conn.execute(
            "select strftime(date_trunc('month', BillingPeriodStart), '%Y-%m'), count(*), sum(BilledCost) "
            "from focus_line_items where x_SourceName = ? group by all order by 1",
            [source],
        ).fetchall()
    return {month: (count, total) for month, count, total in rows}


def loads(warehouse: Path, source: str) -> list[tuple]:
    with reading(warehouse) as conn:
        return conn.execute(
            "select strftime(billing_period, '%Y-%m'), status, raw_rows, raw_billed_cost, "
            "snapshot_export_time, watermark from loads where source_name = ? order by started_at",
            [source],
        ).fetchall()


def new_table(emulator: str, schema: list) -> str:
    dataset = f"billing_{uuid.uuid4().hex[:8]}"
    table = f"{PROJECT}.{dataset}.gcp_billing_export_resource_v1_01A2B3_C4D5E6_F7A8B9"
    create_export_table(emulator, table, schema)
    return table


def bigquery_config(folder: Path, table: str, emulator: str) -> Path:
    return write_config(
        folder,
        f"sources:\n  - {{name: gcp-bq, kind: gcp_billing, table: {table}, endpoint_url: '{emulator}'}}\n",
    )


def test_incremental_loads_converge_on_every_invoice_month(tmp_path: Path, bigquery_emulator: str) -> None:
    table = new_table(bigquery_emulator, DETAILED_EXPORT_SCHEMA)
    config = bigquery_config(tmp_path, table, bigquery_emulator)
    warehouse = lake_of(tmp_path)

    append_rows(bigquery_emulator, table, DETAILED_EXPORT_SCHEMA, FIRST_EXPORT)
    first = run_nightly(config, echo=lambda line: None)
    assert [f"{p:%Y-%m}" for p in first.billing_periods] == ["2026-10", "2026-11"]
    assert (
        loaded_totals(warehouse, "gcp-bq")
        == expected_totals(FIRST_EXPORT)
        == {
            "2026-10": (4, Decimal("113.30472")),  # 2 × (78.372 − 28.99764) + 6.136 + 8.42 tax
            "2026-11": (2, Decimal("50.008927")),  # 1.234567 − 0.5 − 0.1 + 78.372 − 28.99764
        }
    )
    assert [(month, status, watermark) for month, status, *_, watermark in loads(warehouse, "gcp-bq")] == [
        ("2026-10", "loaded", None),  # November still pending: the watermark waits
        ("2026-11", "loaded", datetime(2026, 11, 4, 10, 4, 12, 331907)),
    ]

    append_rows(bigquery_emulator, table, DETAILED_EXPORT_SCHEMA, LATE_EXPORT)
    second = run_nightly(config, echo=lambda line: None)
    assert [f"{p:%Y-%m}" for p in second.billing_periods] == ["2026-10", "2026-11"]
    assert (
        loaded_totals(warehouse, "gcp-bq")
        == expected_totals(FIRST_EXPORT + LATE_EXPORT)
        == {
            "2026-10": (5, Decimal("103.50822")),  # − 9.7965 correction
            "2026-11": (3, Decimal("56.144927")),  # + 6.136 late core-hours of Nov 3
        }
    )
    history = loads(warehouse, "gcp-bq")
    assert len(history) == 4
    assert history[-1][5] == datetime(2026, 11, 6, 5, 12, 9, 482113)
    assert [row[4] for row in history[2:]] == [
        datetime(2026, 11, 6, 5, 12, 9, 482113),
        datetime(2026, 11, 6, 5, 12, 9, 100000),
    ]

    with reading(warehouse) as conn:
        ingested_before = conn.execute("select x_LineItemKey, x_IngestedAt from focus_line_items order by 1").fetchall()
    third = run_nightly(config, echo=lambda line: None)
    assert third.billing_periods == []
    assert len(loads(warehouse, "gcp-bq")) == 4
    assert loaded_totals(warehouse, "gcp-bq") == expected_totals(FIRST_EXPORT + LATE_EXPORT)
    with reading(warehouse) as conn:
        assert (
            conn.execute("select x_LineItemKey, x_IngestedAt from focus_line_items order by 1").fetchall()
            == ingested_before
        )
        correction = conn.execute(
            "select ChargeCategory, ChargeClass, BilledCost, x_GpuHours from focus_line_items "
            "where ChargeClass is not null"
        ).fetchall()
        assert correction == [("Adjustment", "Correction", Decimal("-9.7965"), Decimal(0))]


def test_a_partial_run_keeps_the_other_months_pending(tmp_path: Path, bigquery_emulator: str) -> None:
    table = new_table(bigquery_emulator, DETAILED_EXPORT_SCHEMA)
    config = bigquery_config(tmp_path, table, bigquery_emulator)
    warehouse = lake_of(tmp_path)
    append_rows(bigquery_emulator, table, DETAILED_EXPORT_SCHEMA, FIRST_EXPORT)
    run_nightly(config, echo=lambda line: None)
    append_rows(bigquery_emulator, table, DETAILED_EXPORT_SCHEMA, LATE_EXPORT)

    run_nightly(config, [datetime(2026, 11, 1).date()], echo=lambda line: None)
    history = loads(warehouse, "gcp-bq")
    assert (history[-1][0], history[-1][5]) == ("2026-11", datetime(2026, 11, 4, 10, 4, 12, 331907))
    assert loaded_totals(warehouse, "gcp-bq")["2026-10"] == expected_totals(FIRST_EXPORT)["2026-10"]

    caught_up = run_nightly(config, echo=lambda line: None)
    assert [f"{p:%Y-%m}" for p in caught_up.billing_periods] == ["2026-10"]
    assert loaded_totals(warehouse, "gcp-bq") == expected_totals(FIRST_EXPORT + LATE_EXPORT)
    assert loads(warehouse, "gcp-bq")[-1][5] == datetime(2026, 11, 6, 5, 12, 9, 482113)


# An export job that overlapped the previous one: its November row carries an export_time 2.5 h
# older than the watermark the first load recorded (2026-11-04 10:04:12.331907).
BACKDATED_EXPORT = [
    export_row(STORAGE, "2026-11-03T08:00:00", "2026-11-04 07:34:12 UTC", 2.5, credits=(("FREE_TIER", -0.25),)),
]


def test_a_batch_whose_export_time_goes_backwards_is_loaded(tmp_path: Path, bigquery_emulator: str) -> None:
    table = new_table(bigquery_emulator, DETAILED_EXPORT_SCHEMA)
    config = bigquery_config(tmp_path, table, bigquery_emulator)
    warehouse = lake_of(tmp_path)
    append_rows(bigquery_emulator, table, DETAILED_EXPORT_SCHEMA, FIRST_EXPORT)
    run_nightly(config, echo=lambda line: None)
    watermark = datetime(2026, 11, 4, 10, 4, 12, 331907)
    assert loads(warehouse, "gcp-bq")[-1][5] == watermark
    marks = reader_for(load_config(config).sources[0], load_config(config)).delivery_marks()

    append_rows(bigquery_emulator, table, DETAILED_EXPORT_SCHEMA, BACKDATED_EXPORT)
    assert (
        reader_for(load_config(config).sources[0], load_config(config)).delivery_marks()[date(2026, 11, 1)]
        != marks[date(2026, 11, 1)]
    )
    reloaded = run_nightly(config, echo=lambda line: None)
    assert [f"{p:%Y-%m}" for p in reloaded.billing_periods] == ["2026-11"]
    assert (
        loaded_totals(warehouse, "gcp-bq")
        == expected_totals(FIRST_EXPORT + BACKDATED_EXPORT)
        == {
            "2026-10": (4, Decimal("113.30472")),
            "2026-11": (3, Decimal("52.258927")),  # 50.008927 + 2.5 − 0.25
        }
    )
    month, status, raw_rows, _, snapshot, after = loads(warehouse, "gcp-bq")[-1]
    # the month's newest row is now the backdated one; the watermark does not move back
    assert (month, status, raw_rows, snapshot, after) == (
        "2026-11",
        "loaded",
        3,
        datetime(2026, 11, 4, 7, 34, 12),
        watermark,
    )

    assert run_nightly(config, echo=lambda line: None).billing_periods == []
    assert len(loads(warehouse, "gcp-bq")) == 3


def test_full_refresh_from_the_cli_rereads_a_period(tmp_path: Path, bigquery_emulator: str) -> None:
    table = new_table(bigquery_emulator, DETAILED_EXPORT_SCHEMA)
    config = bigquery_config(tmp_path, table, bigquery_emulator)
    warehouse = lake_of(tmp_path)
    append_rows(bigquery_emulator, table, DETAILED_EXPORT_SCHEMA, FIRST_EXPORT)
    run_nightly(config, echo=lambda line: None)

    nothing_new = CliRunner().invoke(main, ["run", "--config", str(config), "--period", "2026-10"])
    assert nothing_new.exit_code == 0, nothing_new.output
    assert len(loads(warehouse, "gcp-bq")) == 2

    refreshed = CliRunner().invoke(main, ["run", "--config", str(config), "--period", "2026-10", "--full-refresh"])
    assert refreshed.exit_code == 0, refreshed.output
    history = loads(warehouse, "gcp-bq")
    assert [(row[0], row[1], row[2], row[3]) for row in history[2:]] == [
        ("2026-10", "loaded", 4, expected_totals(FIRST_EXPORT)["2026-10"][1])
    ]
    assert loaded_totals(warehouse, "gcp-bq") == expected_totals(FIRST_EXPORT)


def test_an_older_table_without_the_newer_columns(tmp_path: Path, bigquery_emulator: str) -> None:
    table = new_table(bigquery_emulator, OLD_STANDARD_EXPORT_SCHEMA)
    old_names = {field.name for field in OLD_STANDARD_EXPORT_SCHEMA}
    rows = []
    for row in FIRST_EXPORT:
        old = {key: value for key, value in row.items() if key in old_names}
        old["credits"] = [{"name": credit["name"], "amount": credit["amount"]} for credit in row["credits"]]
        rows.append(old)
    append_rows(bigquery_emulator, table, OLD_STANDARD_EXPORT_SCHEMA, rows)
    config = bigquery_config(tmp_path, table, bigquery_emulator)
    warehouse = lake_of(tmp_path)

    run_nightly(config, echo=lambda line: None)

    assert loaded_totals(warehouse, "gcp-bq") == expected_totals(rows) == expected_totals(FIRST_EXPORT)
    with reading(warehouse) as conn:
        storage = conn.execute(
            "select ResourceId, ListCost, PublisherName, x_Credits from focus_line_items "
            "where ServiceName = 'Cloud Storage'"
        ).fetchall()
    assert storage == [
        (None, None, "Google", {"FREE_TIER credit": Decimal("-0.5"), "PROMOTION credit": Decimal("-0.1")})
    ]


def test_a_missing_table_fails_the_run_naming_it_and_keeps_what_was_loaded(
    tmp_path: Path, bigquery_emulator: str
) -> None:
    table = new_table(bigquery_emulator, DETAILED_EXPORT_SCHEMA)
    append_rows(bigquery_emulator, table, DETAILED_EXPORT_SCHEMA, FIRST_EXPORT)
    config = bigquery_config(tmp_path, table, bigquery_emulator)
    warehouse = lake_of(tmp_path)
    run_nightly(config, echo=lambda line: None)
    missing = table.replace("gcp_billing_export_resource_v1", "gcp_billing_export_v1")
    bigquery_config(tmp_path, missing, bigquery_emulator)

    result = CliRunner().invoke(main, ["run", "--config", str(config)])

    assert result.exit_code == 1
    assert f"BigQuery table {missing} not found" in result.output
    assert loaded_totals(warehouse, "gcp-bq") == expected_totals(FIRST_EXPORT)


def test_without_an_emulator_credentials_come_from_the_google_auth_chain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))
    with pytest.raises(
        SourceError, match=re.escape("BigQuery table p.d.gcp_billing_export_v1_X: no Google credentials found")
    ):
        BigQueryBillingExport.connect("p.d.gcp_billing_export_v1_X")


def test_delivery_marks_and_columns_for_the_sensor_and_drift_check(tmp_path: Path, bigquery_emulator: str) -> None:
    table = new_table(bigquery_emulator, DETAILED_EXPORT_SCHEMA)
    config = load_config(bigquery_config(tmp_path, table, bigquery_emulator))
    append_rows(bigquery_emulator, table, DETAILED_EXPORT_SCHEMA, FIRST_EXPORT)
    reader = reader_for(config.sources[0], config)
    newest = {}
    for row in FIRST_EXPORT:
        month = date(int(row["invoice"]["month"][:4]), int(row["invoice"]["month"][4:]), 1)
        exported = datetime.fromisoformat(row["export_time"].removesuffix(" UTC"))
        newest[month] = max(newest.get(month, exported), exported)
    marks = reader.delivery_marks()
    assert marks == {
        month: f"{moment.isoformat()} rows={expected_totals(FIRST_EXPORT)[f'{month:%Y-%m}'][0]}"
        for month, moment in newest.items()
    }

    append_rows(bigquery_emulator, table, DETAILED_EXPORT_SCHEMA, LATE_EXPORT)
    later = reader_for(config.sources[0], config).delivery_marks()
    assert later[date(2026, 10, 1)] > marks[date(2026, 10, 1)] and later[date(2026, 11, 1)] > marks[date(2026, 11, 1)]

    source_format, location, columns = reader.delivery_columns(date(2026, 10, 1))
    drift = column_drift(source_format, columns)
    assert (source_format, location) == ("gcp_billing", table)
    assert drift.missing == () and drift.new == ()


@pytest.mark.usefixtures("aws_credentials")
def test_check_lists_every_source_and_reports_each_that_fails(
    tmp_path: Path, bigquery_emulator: str, moto_endpoint: str
) -> None:
    table = new_table(bigquery_emulator, DETAILED_EXPORT_SCHEMA)
    append_rows(bigquery_emulator, table, DETAILED_EXPORT_SCHEMA, FIRST_EXPORT)
    missing = table.replace("gcp_billing_export_resource_v1", "gcp_billing_export_v1")
    sources = (
        f"  - {{name: gcp-bq, kind: gcp_billing, table: {table}, endpoint_url: '{bigquery_emulator}'}}\n"
        f"  - {{name: aws-cur, kind: aws_cur, uri: 's3://no-such-bucket-x/cur/r', endpoint_url: '{moto_endpoint}'}}\n"
        f"  - {{name: gcp-gone, kind: gcp_billing, table: {missing}, endpoint_url: '{bigquery_emulator}'}}\n"
    )
    config = write_config(tmp_path, f"sources:\n{sources}")

    result = CliRunner().invoke(main, ["check", "--config", str(config)])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        (
            "error: source aws-cur: cannot list s3://no-such-bucket-x/cur/r: NoSuchBucket "
            "(needs s3:ListBucket on the bucket)"
        ),
        (
            f"error: source gcp-gone: BigQuery table {missing} not found "
            "(check the `table` key and the dataset's location)"
        ),
        "check: 2 problems found, nothing was run",
    ]
    config.write_text(f"sources:\n{sources.splitlines()[0]}\n")
    result = CliRunner().invoke(main, ["check", "--config", str(config)])
    assert (result.exit_code, result.output.splitlines()[1:]) == (
        0,
        ["source gcp-bq: billing periods 2026-10, 2026-11"],
    )
