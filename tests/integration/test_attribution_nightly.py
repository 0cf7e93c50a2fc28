"""Shared-cost rules and resource tag snapshots through the nightly job (the Dagster assets) on
the demo data set."""

from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from pipelines.demo.aws.catalog import DEV_ACCOUNT
from pipelines.demo.story.untagged import DEV_INSTANCE_ID
from pipelines.nightly import run_nightly
from pipelines.warehouse.connection import connect
from tests.support.demo_lake import SharedDemo, copy_demo_inputs
from tests.support.lake import lake_of, reading

SNAPSHOT_TAGGED = datetime(2026, 10, 15)
DEV_BOX_ARN = f"arn:aws:ec2:us-east-1:{DEV_ACCOUNT.id}:instance/{DEV_INSTANCE_ID}"


@pytest.fixture(scope="module")
def warehouse(shared_demo: SharedDemo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shared")
    config_path = copy_demo_inputs(shared_demo, root)
    config = yaml.safe_load(config_path.read_text())
    config["attribution"]["shared"] = [
        {"name": "support", "match": {"ServiceName": "AWS Support*"}, "split": "proportional"},
        {"name": "nat", "match": {"ResourceId": "*nat-*", "ProviderName": "Amazon Web Services"}, "split": "even"},
    ]
    config_path.write_text(yaml.safe_dump(config))
    warehouse = lake_of(root)
    # snapshots the tagging source would have written: the dev box (untagged in the export) was
    # untagged on Oct 1 and tagged for a run from Oct 15 on
    conn = connect(warehouse)
    for taken, tags in (
        (datetime(2026, 10, 1), {"Name": "dev"}),
        (SNAPSHOT_TAGGED, {"TrainingRun": "llm-7b-pt-r1", "team": "dev-ex"}),
    ):
        conn.execute(
            "insert into resource_tag_snapshots values ('aws-tags', $taken, 'us-east-1', $arn, "
            "normalize_resource_id($arn), map($keys::varchar[], $values::varchar[]))",
            {"taken": taken, "arn": DEV_BOX_ARN, "keys": list(tags), "values": list(tags.values())},
        )
    conn.close()
    run_nightly(config_path, echo=lambda line: None)
    return warehouse


def query(warehouse: Path, sql: str, **params: object) -> list[tuple]:
    with reading(warehouse) as conn:
        return conn.execute(sql, params or None).fetchall()


def test_support_is_shared_in_proportion_to_each_runs_aws_spend(warehouse: Path) -> None:
    support = query(
        warehouse,
        "select date_trunc('month', BillingPeriodStart), sum(EffectiveCost), count(*) "
        "from focus_line_items where ServiceName like 'AWS Support%' group by all",
    )
    assert support, "the demo bills AWS Support"
    for period, support_total, support_lines in support:
        spend = dict(
            query(
                warehouse,
                "select training_run, sum(effective_cost) from cost_allocations "
                "where date_trunc('month', BillingPeriodStart) = $period and ProviderName = 'Amazon Web Services' "
                "and allocation_method in ('tag', 'resource_tags', 'registry') "
                "group by all having sum(effective_cost) > 0",
                period=period,
            )
        )
        shared = dict(
            query(
                warehouse,
                "select training_run, sum(effective_cost) from cost_allocations "
                "where date_trunc('month', BillingPeriodStart) = $period "
                "and allocation_rule = 'shared support (proportional)' group by all",
                period=period,
            )
        )
        assert set(shared) == set(spend) and len(shared) >= 2
        assert sum(shared.values()) == support_total
        for run, run_spend in spend.items():
            exact = support_total * run_spend / sum(spend.values())
            # each support line is split exactly; per line a part is off its exact quotient by < 1e-10
            assert abs(shared[run] - exact) <= support_lines * Decimal("1e-10")


def test_nat_gateway_is_shared_evenly_and_reconciliation_stays_zero(warehouse: Path) -> None:
    parts = query(
        warehouse,
        "select x_LineItemKey, count(*), count(distinct training_run), min(allocation_method), max(allocation_method) "
        "from cost_allocations where ResourceId like '%nat-%' group by all",
    )
    assert parts and all(methods == ["shared", "shared"] and runs == count for _, count, runs, *methods in parts)
    with reading(warehouse) as conn:
        cursor = conn.execute("select * from reconciliation")
        columns = [d[0] for d in cursor.description]
        rows = [dict(zip(columns, row)) for row in cursor.fetchall()]
    assert rows and all(row[c] == 0 for row in rows for c in columns if c.endswith("_diff"))


def test_the_dev_box_is_attributed_by_the_snapshot_valid_at_each_charge(warehouse: Path) -> None:
    with reading(warehouse) as conn:
        lines = conn.execute(
            "select x_LineItemKey, ChargePeriodEnd, EffectiveCost from focus_line_items where ResourceId = $id",
            {"id": DEV_INSTANCE_ID},
        ).fetchall()
        allocations = {
            row[0]: row[1:]
            for row in conn.execute(
                "select x_LineItemKey, training_run, allocation_method, owner, effective_cost "
                "from cost_allocations where ResourceId = $id",
                {"id": DEV_INSTANCE_ID},
            ).fetchall()
        }
    tagged = [line for line in lines if line[1] >= SNAPSHOT_TAGGED]
    assert tagged and len(tagged) < len(lines)
    for key, charge_end, effective in lines:
        run, method, owner, allocated = allocations[key]
        assert allocated == effective
        if charge_end >= SNAPSHOT_TAGGED:
            assert (run, method, owner) == ("llm-7b-pt-r1", "resource_tags", "dev-ex")
        else:
            assert (run, method) == (None, "unattributed")
