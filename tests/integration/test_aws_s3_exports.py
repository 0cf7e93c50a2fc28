"""AWS exports read from S3 by the real boto3 code over HTTP, against a moto server on 127.0.0.1.

Every scenario writes deliveries in AWS's layout, runs the ingest, and checks the exact
per-period totals computed from the lines written — so nothing stale, nothing twice.
"""

from __future__ import annotations

import uuid
from datetime import date
from pathlib import Path

import boto3
import dagster as dg
import pytest

from connectors.errors import SourceError
from pipelines.nightly import run_nightly
from pipelines.orchestration.resources import RunLedgerResource
from pipelines.tags.assets import resource_tag_snapshots
from tests.support import write_config
from tests.support.cur_exports import (
    BucketSink,
    ingest,
    lines,
    period_totals,
    total,
    write_athena_delivery,
    write_athena_status,
    write_cur2_delivery,
    write_legacy_delivery,
)
from tests.support.lake import lake_of, reading

# dummy AWS credentials (tests/support/moto_server.py) for every test
pytestmark = pytest.mark.usefixtures("aws_credentials")

SEPTEMBER, OCTOBER = date(2026, 9, 1), date(2026, 10, 1)


@pytest.fixture
def bucket(moto_endpoint: str) -> BucketSink:
    client = boto3.client("s3", endpoint_url=moto_endpoint, region_name="us-east-1")
    name = f"billing-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    return BucketSink(client, name)


def config_for(tmp_path: Path, bucket: BucketSink, moto_endpoint: str, uri_path: str) -> Path:
    return write_config(
        tmp_path,
        f"sources:\n  - name: aws-main\n    kind: aws_cur\n    uri: s3://{bucket.bucket}/{uri_path}\n"
        f"    endpoint_url: {moto_endpoint}\n",
    )


def loads(tmp_path: Path) -> list[tuple]:
    with reading(tmp_path) as conn:
        return conn.execute(
            "select strftime(billing_period, '%Y-%m'), status, raw_rows, raw_billed_cost "
            "from loads order by started_at, load_id"
        ).fetchall()


def warehouse(tmp_path: Path) -> Path:
    return lake_of(tmp_path)


def test_create_new_loads_the_fresh_assembly_and_rechecks_the_previous_period(
    tmp_path: Path, bucket: BucketSink, moto_endpoint: str
) -> None:
    september = lines(SEPTEMBER, "sep", ["4.0000000001", "5.25"])
    stale = lines(OCTOBER, "stale", ["100.00", "200.00", "300.00"])
    fresh_1, fresh_2 = lines(OCTOBER, "fresh1", ["1.5", "2.25"]), lines(OCTOBER, "fresh2", ["0.0000000004", "7"])
    write_legacy_delivery(bucket, "cur", "acme", SEPTEMBER, "asm-sep-1", [september], bucket=bucket.bucket)
    write_legacy_delivery(bucket, "cur", "acme", OCTOBER, "asm-oct-1", [stale], bucket=bucket.bucket)
    write_legacy_delivery(bucket, "cur", "acme", OCTOBER, "asm-oct-2", [fresh_1, fresh_2], bucket=bucket.bucket)
    config = config_for(tmp_path, bucket, moto_endpoint, "cur/acme")
    for period in (SEPTEMBER, OCTOBER):
        ingest(config, period)
    assert period_totals(warehouse(tmp_path)) == {
        "2026-09": (2, total(september)),
        "2026-10": (4, total(fresh_1 + fresh_2)),  # the stale assembly beside it is never read
    }

    # AWS restates September: a new assembly; October's delivery is unchanged.
    restated = lines(SEPTEMBER, "sep", ["4.0000000001", "5.25", "-1.10"])
    write_legacy_delivery(bucket, "cur", "acme", SEPTEMBER, "asm-sep-2", [restated], bucket=bucket.bucket)
    for period in (SEPTEMBER, OCTOBER):
        ingest(config, period)
    assert period_totals(warehouse(tmp_path)) == {
        "2026-09": (3, total(restated)),
        "2026-10": (4, total(fresh_1 + fresh_2)),
    }
    assert [(p, s) for p, s, *_ in loads(tmp_path)] == [
        ("2026-09", "loaded"),
        ("2026-10", "loaded"),
        ("2026-09", "loaded"),
        ("2026-10", "unchanged"),
    ]


def test_an_overwrite_redelivery_replaces_the_period(tmp_path: Path, bucket: BucketSink, moto_endpoint: str) -> None:
    first = lines(OCTOBER, "a", ["10.10", "20.20", "30.30"])
    write_legacy_delivery(bucket, "cur", "ow", OCTOBER, None, [first], bucket=bucket.bucket)
    config = config_for(tmp_path, bucket, moto_endpoint, "cur/ow")
    ingest(config, OCTOBER)
    assert period_totals(warehouse(tmp_path)) == {"2026-10": (3, total(first))}

    second = lines(OCTOBER, "a", ["10.10", "20.20", "30.30", "0.01"])  # same keys, new content
    write_legacy_delivery(bucket, "cur", "ow", OCTOBER, None, [second], bucket=bucket.bucket, compression="zip")
    ingest(config, OCTOBER)
    assert period_totals(warehouse(tmp_path)) == {"2026-10": (4, total(second))}
    assert [s for _, s, *_ in loads(tmp_path)] == ["loaded", "loaded"]


def test_cur2_export_with_two_executions_and_a_multi_file_period_runs_the_whole_chain(
    tmp_path: Path, bucket: BucketSink, moto_endpoint: str
) -> None:
    old = lines(OCTOBER, "old", ["50", "60"], training_run="llm-7b-pt-r1")
    new_1 = lines(OCTOBER, "new1", ["11.1111111111", "22.2222222222"], training_run="llm-7b-pt-r1")
    new_2 = lines(OCTOBER, "new2", ["33.3333333333"])
    write_cur2_delivery(bucket, "exports", "cur2", OCTOBER, "exec-1", [old], bucket=bucket.bucket)
    write_cur2_delivery(bucket, "exports", "cur2", OCTOBER, "exec-2", [new_1, new_2], bucket=bucket.bucket)
    run_nightly(config_for(tmp_path, bucket, moto_endpoint, "exports/cur2"), echo=lambda line: None)
    assert period_totals(warehouse(tmp_path)) == {"2026-10": (3, total(new_1 + new_2))}
    with reading(warehouse(tmp_path)) as conn:
        by_run = conn.execute(
            "select training_run, sum(billed_cost) from cost_allocations group by 1 order by 1 nulls last"
        ).fetchall()
        diffs = conn.execute(
            "select rows_raw_focus_diff, billed_raw_focus_diff, billed_focus_allocated_diff from reconciliation"
        ).fetchall()
        source_files = conn.execute("select distinct x_SourceFile from focus_line_items order by 1").fetchall()
        loaded_files = conn.execute("select files from loads where status = 'loaded'").fetchall()
    execution = f"s3://{bucket.bucket}/exports/cur2/data/BILLING_PERIOD=2026-10/20261102T000000Z-exec-2"
    expected_files = [f"{execution}/cur2-00001.snappy.parquet", f"{execution}/cur2-00002.snappy.parquet"]
    assert source_files == [(f,) for f in expected_files] and loaded_files == [(expected_files,)]
    assert by_run == [("llm-7b-pt-r1", total(new_1)), (None, total(new_2))]
    assert diffs == [(0, 0, 0)]
    cached = sorted(p.name for p in (tmp_path / ".runledger" / "cache" / "aws-main").rglob("*.parquet"))
    assert len(cached) == 2 and all("exec-1" not in name for name in cached)


def test_an_updating_parquet_export_is_not_read_until_ready(
    tmp_path: Path, bucket: BucketSink, moto_endpoint: str
) -> None:
    first = lines(OCTOBER, "v1", ["3.3", "4.4"], training_run="llm-13b-ft-r2")
    write_athena_delivery(bucket, "athena", "cur-pq", OCTOBER, [first])
    write_athena_status(bucket, "athena", "cur-pq", "READY")
    config = config_for(tmp_path, bucket, moto_endpoint, "athena/cur-pq")
    ingest(config, OCTOBER)
    assert period_totals(warehouse(tmp_path)) == {"2026-10": (2, total(first))}

    # AWS starts rewriting: half of the new files are there, the status says UPDATING.
    rewritten = lines(OCTOBER, "v2", ["3.3", "4.4", "5.5"], training_run="llm-13b-ft-r2")
    write_athena_status(bucket, "athena", "cur-pq", "UPDATING")
    write_athena_delivery(bucket, "athena", "cur-pq", OCTOBER, [rewritten[:1]])
    ingest(config, OCTOBER)
    assert period_totals(warehouse(tmp_path)) == {"2026-10": (2, total(first))}
    assert loads(tmp_path)[-1][:2] == ("2026-10", "not_ready")

    write_athena_delivery(bucket, "athena", "cur-pq", OCTOBER, [rewritten])
    write_athena_status(bucket, "athena", "cur-pq", "READY")
    ingest(config, OCTOBER)
    assert period_totals(warehouse(tmp_path)) == {"2026-10": (3, total(rewritten))}
    with reading(warehouse(tmp_path)) as conn:
        assert conn.execute("select distinct x_SourceFormat, Tags from focus_line_items").fetchall() == [
            ("aws_legacy_parquet", {"user_training_run": "llm-13b-ft-r2"})
        ]


def test_a_missing_object_names_bucket_and_key_and_keeps_the_previous_data(
    tmp_path: Path, bucket: BucketSink, moto_endpoint: str
) -> None:
    good = lines(OCTOBER, "good", ["12.34", "56.78"])
    write_cur2_delivery(bucket, "exports", "cur2", OCTOBER, "exec-1", [good], bucket=bucket.bucket)
    config = config_for(tmp_path, bucket, moto_endpoint, "exports/cur2")
    ingest(config, OCTOBER)

    missing = "exports/cur2/data/BILLING_PERIOD=2026-10/20261102T000000Z-exec-2/cur2-00009.snappy.parquet"
    write_cur2_delivery(
        bucket,
        "exports",
        "cur2",
        OCTOBER,
        "exec-2",
        [lines(OCTOBER, "next", ["1"])],
        bucket=bucket.bucket,
        manifest_extra_files=(missing,),
    )
    with pytest.raises(SourceError, match=rf"s3://{bucket.bucket}/{missing}.*(404|Not Found)"):
        ingest(config, OCTOBER)
    assert period_totals(warehouse(tmp_path)) == {"2026-10": (2, total(good))}
    assert loads(tmp_path)[-1][1] == "failed"


def test_a_missing_bucket_is_a_clear_error(tmp_path: Path, moto_endpoint: str) -> None:
    config = write_config(
        tmp_path,
        f"sources:\n  - {{name: aws-main, kind: aws_cur, uri: 's3://no-such-bucket-x/cur/r', "
        f"endpoint_url: '{moto_endpoint}'}}\n",
    )
    with pytest.raises(SourceError, match="cannot list s3://no-such-bucket-x/cur/r: NoSuchBucket"):
        run_nightly(config, echo=lambda line: None)


def test_tag_snapshots_read_every_page_of_every_region(tmp_path: Path, moto_endpoint: str) -> None:
    east = boto3.client("ec2", endpoint_url=moto_endpoint, region_name="us-east-1")
    west = boto3.client("ec2", endpoint_url=moto_endpoint, region_name="eu-west-1")
    run_tag = f"run-{uuid.uuid4().hex[:8]}"

    def launch(client, count: int, run: str) -> list[str]:
        reservation = client.run_instances(
            ImageId="ami-12c6146b",
            MinCount=count,
            MaxCount=count,
            InstanceType="p5.48xlarge",
            TagSpecifications=[
                {
                    "ResourceType": "instance",
                    "Tags": [
                        {"Key": "training_run", "Value": run},
                        {"Key": "Cost Center", "Value": "research"},
                    ],
                }
            ],
        )
        return [i["InstanceId"] for i in reservation["Instances"]]

    east_ids = launch(east, 130, run_tag)  # more than one page of 100
    west_ids = launch(west, 7, run_tag)
    config = write_config(
        tmp_path,
        f"sources:\n  - name: aws-tags\n    kind: aws_tags\n    regions: [us-east-1, eu-west-1]\n"
        f"    endpoint_url: {moto_endpoint}\n",
    )
    resources = {"runledger": RunLedgerResource(config_path=str(config))}
    for _ in range(2):
        dg.materialize([resource_tag_snapshots], resources=resources)
    with reading(warehouse(tmp_path)) as conn:
        snapshots = conn.execute(
            "select snapshot_at, region, count(*) from resource_tag_snapshots "
            "where tags['training_run'] = $run group by all order by all",
            {"run": run_tag},
        ).fetchall()
        keys = {
            row[0]
            for row in conn.execute(
                "select resource_key from resource_tag_snapshots where tags['training_run'] = $run", {"run": run_tag}
            ).fetchall()
        }
        duplicated = conn.execute(
            "select count(*) from (select snapshot_at, resource_arn from resource_tag_snapshots "
            "group by all having count(*) > 1)"
        ).fetchone()[0]
        cost_center = conn.execute(
            "select distinct tags['Cost Center'] from resource_tag_snapshots where tags['training_run'] = $run",
            {"run": run_tag},
        ).fetchall()
    first, second = sorted({s for s, _, _ in snapshots})
    assert snapshots == [
        (first, "eu-west-1", 7),
        (first, "us-east-1", 130),
        (second, "eu-west-1", 7),
        (second, "us-east-1", 130),
    ]
    assert keys == set(east_ids + west_ids)  # ARNs reduce to the bare ids the CUR uses
    assert duplicated == 0 and cost_center == [("research",)]


class ThrottlingProxy:
    """An HTTP proxy in front of the moto server that answers the first GETs of every data file
    with S3's `503 SlowDown`, as S3 does under request-rate pressure."""

    def __init__(self, upstream: str, throttled_per_key: int) -> None:
        import http.server
        import threading
        import urllib.error
        import urllib.request

        self.throttled: dict[str, int] = {}
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _forward(self) -> None:
                path = self.path.split("?", 1)[0]
                if self.command == "GET" and path.endswith(".parquet"):
                    seen = proxy.throttled.get(path, 0)
                    if seen < throttled_per_key:
                        proxy.throttled[path] = seen + 1
                        body = (
                            b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
                        )
                        self.send_response(503)
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                        return
                length = int(self.headers.get("Content-Length") or 0)
                request = urllib.request.Request(
                    upstream + self.path,
                    data=self.rfile.read(length) if length else None,
                    method=self.command,
                    headers={k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")},
                )
                try:
                    with urllib.request.urlopen(request) as response:
                        status, headers, body = response.status, response.headers, response.read()
                except urllib.error.HTTPError as error:
                    status, headers, body = error.code, error.headers, error.read()
                self.send_response(status)
                for name, value in headers.items():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward  # noqa: N815 - http.server's names

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_throttled_downloads_are_retried_with_backoff(tmp_path: Path, bucket: BucketSink, moto_endpoint: str) -> None:
    files = [lines(OCTOBER, "t1", ["1.01", "2.02"]), lines(OCTOBER, "t2", ["3.03"])]
    write_cur2_delivery(bucket, "exports", "cur2", OCTOBER, "exec-1", files, bucket=bucket.bucket)
    proxy = ThrottlingProxy(moto_endpoint, throttled_per_key=2)
    with proxy as endpoint:
        ingest(config_for(tmp_path, bucket, endpoint, "exports/cur2"), OCTOBER)
    assert sorted(proxy.throttled.values()) == [2, 2]  # both data files were refused twice, then read
    assert period_totals(warehouse(tmp_path)) == {"2026-10": (3, total(files[0] + files[1]))}
