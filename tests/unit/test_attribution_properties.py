"""Property: for random line items, tags, resource tag snapshots, registries and shared-cost rules,
every line's allocations conserve its amounts to the last decimal (the invariant of cost_allocations)."""

from collections import defaultdict
from datetime import datetime, timedelta
from decimal import Decimal

import duckdb
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pipelines.attribution.allocate import allocate_period, check_period
from pipelines.attribution.registry import RegisteredRun, replace_run_registry
from pipelines.attribution.settings import DEFAULT_DIMENSIONS, SharedRule
from pipelines.warehouse.connection import transaction
from tests.support.lake import memory_warehouse
from tests.unit.test_attribution import PERIOD, add_line

OCTOBER = datetime(2026, 10, 1)
RUNS = ["r1", "r2", "r3", "r4"]
RESOURCES = ["i-1a", "i-1b", "i-2", "vol-9", "arn:aws:s3:::bucket-x", None]
SERVICES = ["Amazon Elastic Compute Cloud", "AWS Support (Business)", "Amazon Simple Storage Service", "Compute Engine"]
PATTERNS = ["i-1*", "i-?", "i-2", "*", "bucket-?", "arn:aws:s3:::*", "vol-[0-9]"]
TAG_KEYS = ["training_run", "user:Training-Run", "run_id", "owner", "team", "experiment"]

amounts = st.decimals(
    min_value=Decimal(-(10**6)), max_value=Decimal(10**6), places=10, allow_nan=False, allow_infinity=False
)
moments = st.integers(min_value=-3 * 24, max_value=33 * 24).map(lambda hours: OCTOBER + timedelta(hours=hours))


@st.composite
def line_items(draw: st.DrawFn) -> dict:
    start = draw(moments)
    duration = draw(
        st.sampled_from(
            [None, timedelta(0), timedelta(seconds=1), timedelta(hours=1), timedelta(days=1), timedelta(days=9)]
        )
    )
    return {
        "tags": draw(st.dictionaries(st.sampled_from(TAG_KEYS), st.sampled_from(RUNS + [" ", "alice"]), max_size=3)),
        "billed": draw(amounts),
        "effective": draw(amounts),
        "ChargePeriodStart": start,
        "ChargePeriodEnd": None if duration is None else start + duration,
        "ResourceId": draw(st.sampled_from(RESOURCES)),
        "ServiceName": draw(st.sampled_from(SERVICES)),
        # storage: a registered resource's line after its run's window is the run's too
        "x_CostCategory": draw(st.sampled_from(["compute", "storage"])),
        "ProviderName": draw(st.sampled_from(["Amazon Web Services", "Google Cloud"])),
        "BillingCurrency": draw(st.sampled_from(["USD", "EUR"])),
        "x_GpuHours": draw(st.decimals(min_value=0, max_value=10**4, places=10)),
    }


@st.composite
def registries(draw: st.DrawFn) -> list[RegisteredRun]:
    runs = []
    for run_id in draw(st.lists(st.sampled_from(RUNS), unique=True, max_size=4)):
        start = draw(st.none() | moments)
        end = draw(st.none() | moments)
        if start and end and end <= start:
            start, end = end - timedelta(hours=1), start
        runs.append(
            RegisteredRun(
                id=run_id,
                start=start,
                end=end,
                resources=draw(st.lists(st.sampled_from(PATTERNS), max_size=3)),
                weight=draw(st.sampled_from([0.5, 1, 2, 3.25, 32])),
            )
        )
    return runs


@st.composite
def fixed_weights(draw: st.DrawFn) -> dict[str, Decimal]:
    runs = draw(st.lists(st.sampled_from(RUNS + ["no-spend"]), unique=True, min_size=1, max_size=4))
    cuts = sorted(draw(st.lists(st.integers(1, 9999), unique=True, min_size=len(runs) - 1, max_size=len(runs) - 1)))
    bounds = [0, *cuts, 10000]
    return {run: Decimal(bounds[i + 1] - bounds[i]) / 10000 for i, run in enumerate(runs)}


@st.composite
def shared_rules(draw: st.DrawFn) -> list[SharedRule]:
    rules = []
    for index in range(draw(st.integers(0, 3))):
        split = draw(st.sampled_from(["proportional", "even", "fixed"]))
        match = draw(
            st.dictionaries(
                st.sampled_from(["ServiceName", "ResourceId", "ProviderName"]),
                st.sampled_from(["*", "AWS Support*", "Amazon *", "i-*", "Google Cloud", "Compute Engine"]),
                min_size=1,
                max_size=2,
            )
        )
        weights = draw(fixed_weights()) if split == "fixed" else None
        rules.append(SharedRule(name=f"rule-{index}", match=match, split=split, weights=weights))
    return rules


snapshots = st.lists(
    st.tuples(
        st.sampled_from(["i-1a", "arn:aws:ec2:us-east-1:1:instance/i-2", "arn:aws:s3:::bucket-x", "vol-9"]),
        moments,
        st.dictionaries(st.sampled_from(TAG_KEYS), st.sampled_from(RUNS), max_size=2),
    ),
    max_size=5,
    unique_by=lambda snapshot: (snapshot[0], snapshot[1]),
)


@pytest.fixture(scope="module")
def warehouse() -> duckdb.DuckDBPyConnection:
    return memory_warehouse()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(line_items(), min_size=1, max_size=10),
    registry=registries(),
    rules=shared_rules(),
    tag_snapshots=snapshots,
)
def test_every_line_is_allocated_to_the_last_decimal(
    warehouse: duckdb.DuckDBPyConnection,
    lines: list[dict],
    registry: list[RegisteredRun],
    rules: list[SharedRule],
    tag_snapshots: list[tuple],
) -> None:
    with transaction(warehouse):
        for table in ("cost_allocations", "focus_line_items", "resource_tag_snapshots"):
            warehouse.execute(f"delete from {table}")
        replace_run_registry(warehouse, registry)
        for arn, taken, tags in tag_snapshots:
            warehouse.execute(
                "insert into resource_tag_snapshots values ('tags', $taken, null, $arn, normalize_resource_id($arn), "
                "map($keys::varchar[], $values::varchar[]))",
                {"taken": taken, "arn": arn, "keys": list(tags), "values": list(tags.values())},
            )
        for index, line in enumerate(lines):
            fields = {k: v for k, v in line.items() if k not in ("tags", "billed", "effective")}
            add_line(warehouse, f"line-{index}", line["tags"], str(line["billed"]), str(line["effective"]), **fields)

    allocate_period(warehouse, PERIOD, DEFAULT_DIMENSIONS, rules)

    rows = warehouse.execute(
        "select x_LineItemKey, training_run, allocation_method, allocation_ratio, billed_cost, effective_cost, "
        "gpu_hours, allocation_rule = 'registry after window' from cost_allocations"
    ).fetchall()
    sums: dict[str, list[Decimal]] = defaultdict(lambda: [Decimal(0)] * 4)
    for key, run, method, *values, after_window in rows:
        if after_window:
            event("registry after window")
        assert (run is None) == (method == "unattributed")
        assert method in {"tag", "resource_tags", "registry", "shared", "unattributed"}
        assert 0 <= values[0] <= 1
        sums[key] = [total + value for total, value in zip(sums[key], values)]
    for method in sorted({row[2] for row in rows}):
        event(f"allocation method {method}")  # shown by --hypothesis-show-statistics
    expected = {
        f"line-{i}": [Decimal(1), line["billed"], line["effective"], line["x_GpuHours"]] for i, line in enumerate(lines)
    }
    assert dict(sums) == expected
    assert all(check["unbalanced_line_items"] == 0 for check in check_period(warehouse, PERIOD))
