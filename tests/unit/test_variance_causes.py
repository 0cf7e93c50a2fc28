"""variance_causes on random inputs: every level sums exactly to its parent; and the "why"
paragraph's phrasing rule on hand-built causes."""

from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.budgets.causes import build_variance_causes
from pipelines.reports.data import CostLine, RunHeader, RunOverview, VarianceCause
from pipelines.reports.run_causes import variance_steps, why_paragraph
from pipelines.warehouse.connection import transaction
from tests.support.lake import memory_warehouse

TEN_PLACES = Decimal("0.0000000001")
PRICING_TYPES = ("on_demand", "savings_plan", "reservation", "spot", "committed_use")
CATEGORIES = ("storage", "network", "data", "monitoring")

money = st.decimals(min_value=-(10**6), max_value=10**6, places=10, allow_nan=False, allow_infinity=False)
cost = st.decimals(min_value=0, max_value=10**6, places=10, allow_nan=False, allow_infinity=False)
hours = st.decimals(min_value=0, max_value=10**5, places=10, allow_nan=False, allow_infinity=False)
rates = st.decimals(min_value=0, max_value=100, places=4, allow_nan=False, allow_infinity=False)


def exact(value: Decimal) -> Decimal:
    """Rounded to 10 places, half away from zero, as the warehouse stores it."""
    return value.quantize(TEN_PLACES, rounding=ROUND_HALF_UP)


@st.composite
def runs(draw: st.DrawFn) -> dict:
    """One budgeted run's inputs, as budget_variance, waste, run_progress and run_pricing hold
    them: the compute split usage = round((actual - planned GPU-hours) x rate, 10), rate = the
    rest, the total the sum of the categories."""
    planned_hours, rate = draw(hours), draw(rates)
    pricing = draw(st.dictionaries(st.sampled_from(PRICING_TYPES), st.tuples(hours, cost), max_size=4))
    actual_hours = sum((gpu_hours for gpu_hours, _ in pricing.values()), Decimal(0))
    other_compute = draw(cost)
    compute_actual = sum((amount for _, amount in pricing.values()), other_compute)
    compute_estimate = exact(planned_hours * rate)
    usage = exact((actual_hours - planned_hours) * rate)
    categories = draw(st.dictionaries(st.sampled_from(CATEGORIES), st.tuples(cost, cost), max_size=4))
    return {
        "planned_hours": planned_hours,
        "actual_hours": actual_hours,
        "rate": rate,
        "compute": (compute_estimate, compute_actual, compute_actual - compute_estimate - usage, usage),
        "categories": categories,
        "pricing": pricing,
        "waste": draw(st.lists(st.tuples(st.sampled_from(("idle_after_run", "recompute_after_failure")), hours))),
        "progress": draw(
            st.none() | st.tuples(st.none() | st.integers(0, 10**13), hours, hours)  # tokens, down h, down GPU-h
        ),
        "planned_tokens": draw(st.none() | st.integers(1, 10**13)),
        # run_utilization's hours: data-wait GPU-hours with a share, or a sampled hour without timings
        "utilization": draw(st.lists(st.none() | hours, max_size=4)),
    }


def load(conn: duckdb.DuckDBPyConnection, inputs: dict[str, dict]) -> None:
    for table in ("budget_variance", "budget_baselines", "waste", "run_progress", "run_pricing", "run_utilization"):
        conn.execute(f"delete from {table}")
    for run, data in inputs.items():
        estimate, actual, rate_variance, usage_variance = data["compute"]
        rows = [("compute", estimate, actual, data["planned_hours"], data["actual_hours"], data["rate"],
                 rate_variance, usage_variance)]  # fmt: skip
        rows += [(name, e, a, None, None, None, None, None) for name, (e, a) in data["categories"].items()]
        rows.append(("total", sum(r[1] for r in rows), sum(r[2] for r in rows), None, None, None, None, None))
        conn.executemany(
            "insert into budget_variance (training_run, cost_category, currency, estimated_cost, actual_cost, "
            "variance, estimated_gpu_hours, actual_gpu_hours, estimated_rate, rate_variance, usage_variance) "
            "values ($1, $2, 'USD', $3, $4, $4 - $3, $5, $6, $7, $8, $9)",
            [(run, *row) for row in rows],
        )
        conn.execute(
            "insert into budget_baselines (training_run, cost_category, currency, estimated_cost, training_tokens, "
            "thresholds, \"window\", budget_file) values ($1, 'compute', 'USD', $2, $3, "
            "{'warning': 0.8, 'over': 1.0}, {'start': date '2026-10-01', 'end': date '2026-11-01'}, 'b.yaml')",
            [run, estimate, data["planned_tokens"]],
        )
        for kind, gpu_hours in data["waste"]:
            conn.execute(
                "insert into waste (training_run, kind, cost_category, effective_cost, gpu_hours, method) "
                "values ($1, $2, 'compute', 1, $3, 'm')",
                [run, kind, gpu_hours],
            )
        if data["progress"] is not None:
            conn.execute(
                "insert into run_progress (training_run, tokens_trained, downtime_hours, downtime_gpu_hours) "
                "values ($1, $2, $3, $4)",
                [run, *data["progress"]],
            )
        for hour, wait_gpu_hours in enumerate(data.get("utilization", ())):
            conn.execute(
                "insert into run_utilization (training_run, hour, gpus, gpu_utilization, data_wait_share, samples, "
                "data_wait_gpu_hours) values ($1, timestamp '2026-10-06' + to_hours($2), 8, 0.5, $3, 4, $4)",
                [run, hour, None if wait_gpu_hours is None else Decimal("0.1"), wait_gpu_hours],
            )
        for pricing, (gpu_hours, amount) in data["pricing"].items():
            conn.execute(
                "insert into run_pricing (training_run, pricing, currency, gpu_hours, effective_cost, resources, "
                "cost_per_gpu_hour, gpu_hours_share) values ($1, $2, 'USD', $3, $4, 1, decimal_divide($4, $3), 1)",
                [run, pricing, gpu_hours, amount],
            )


@pytest.fixture(scope="module")
def shared_warehouse() -> duckdb.DuckDBPyConnection:
    """One warehouse for every example: each replaces the inputs of the last."""
    return memory_warehouse()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs=st.dictionaries(st.sampled_from(("run-a", "run-b", "run-c")), runs(), min_size=1, max_size=3))
def test_every_level_sums_exactly_to_its_parent(shared_warehouse: duckdb.DuckDBPyConnection, inputs: dict) -> None:
    conn = shared_warehouse
    with transaction(conn):
        load(conn, inputs)
        build_variance_causes(conn)
    parents = {
        (run, category): (variance, rate_variance, usage_variance)
        for run, category, variance, rate_variance, usage_variance in conn.execute(
            "select training_run, cost_category, variance, rate_variance, usage_variance from budget_variance"
        ).fetchall()
    }
    sums: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    rows = conn.execute("select training_run, parent, cause, amount from variance_causes").fetchall()
    for run, parent, _, amount in rows:
        sums[run, parent] += amount
    for run in inputs:
        variance, _, _ = parents[run, "total"]
        _, rate_variance, usage_variance = parents[run, "compute"]
        assert sums[run, "total"] == variance
        assert sums[run, "rate"] == rate_variance
        assert sums[run, "usage"] == usage_variance
        causes = {(parent, cause) for r, parent, cause, _ in rows if r == run}
        assert {cause for parent, cause in causes if parent == "usage"} == {
            "idle_after_run", "recompute_after_failure", "restart_downtime", "scope", "throughput",
        }  # fmt: skip
        assert {cause for parent, cause in causes if parent == "total"} == {"rate", "usage", *inputs[run]["categories"]}
        (throughput,) = [
            amount for r, parent, cause, amount in rows if (r, parent, cause) == (run, "usage", "throughput")
        ]
        timed = any(wait is not None for wait in inputs[run]["utilization"])  # a run with step timings
        assert {cause for parent, cause in causes if parent == "throughput"} == (
            {"input_bound", "compute_throughput"} if timed else set()
        )
        if timed:
            assert sums[run, "throughput"] == throughput


def cause(
    parent: str,
    name: str,
    amount: str,
    evidence: str | None = None,
    pricing: str | None = None,
    gpu_hours: Decimal | None = Decimal(0),
) -> VarianceCause:
    return VarianceCause(parent, name, pricing, Decimal(amount), gpu_hours, evidence)


def overview(variance: str, ratio: float, causes: tuple[VarianceCause, ...]) -> RunOverview:
    header = RunHeader("run-a", None, None, None, "USD", True, None, None, None, None, "over", None, (), None, None)
    line = CostLine("total", Decimal(100), Decimal(100) + Decimal(variance), Decimal(variance), ratio, "over",
                    None, None, None, None, None, None, None)  # fmt: skip
    return RunOverview(header=header, categories=(), total=line, causes=causes)


CAUSES = (
    cause("total", "rate", "30"),
    cause("total", "usage", "-5"),
    cause("total", "storage", "-12.5", "actual 7.50 against an estimate of 20.00"),
    cause("total", "network", "0", "no estimate; actual 0.00"),
    cause("rate", "pricing_mix", "42.004", "3 resources on demand", pricing="on_demand"),
    cause("rate", "price", "-12.004", "at 1.90 against 2.00", pricing="savings_plan"),
    cause("usage", "idle_after_run", "0", "0 GPU-h charged after the run's end"),
    cause("usage", "recompute_after_failure", "7", "1 failure: 3.5 GPU-h redone"),
    cause("usage", "restart_downtime", "0"),
    cause("usage", "scope", "-20", "half the planned tokens trained"),
    cause("usage", "throughput", "8", "the rest of usage"),
)


def test_the_why_paragraph_names_the_three_largest_causes_with_amount_and_evidence() -> None:
    why = why_paragraph(overview("12.5", 0.125, CAUSES))
    assert why == (
        "12.50 (12.5 %) over the estimate. The largest causes: on-demand GPU-hours +42.00 (3 resources on "
        "demand); fewer tokens than planned -20.00 (half the planned tokens trained); storage -12.50 (actual "
        "7.50 against an estimate of 20.00)."
    )
    assert why_paragraph(overview("0", 0.0, ())) is None


def test_the_waterfall_steps_are_the_leaves_rate_then_usage_then_categories() -> None:
    assert variance_steps(overview("12.5", 0.125, CAUSES)) == [
        ("on-demand GPU-hours", Decimal("42.004")),
        ("Savings Plan price", Decimal("-12.004")),
        ("recompute after failures", Decimal(7)),
        ("fewer tokens than planned", Decimal(-20)),
        ("slower throughput", Decimal(8)),
        ("storage", Decimal("-12.5")),
        ("network", Decimal(0)),
    ]


def test_input_bound_time_is_told_in_the_why_paragraph_and_not_as_a_waterfall_step() -> None:
    split = (
        *CAUSES,
        cause("throughput", "input_bound", "6", "24 GPU-h waiting for data over 3 hours with step timings"),
        cause("throughput", "compute_throughput", "2", "the rest of the throughput cause"),
    )
    assert variance_steps(overview("12.5", 0.125, split)) == variance_steps(overview("12.5", 0.125, CAUSES))
    assert why_paragraph(overview("12.5", 0.125, split)) == why_paragraph(overview("12.5", 0.125, CAUSES)) + (
        " Of the slower throughput, 6.00 (75.0 % of it) is time the GPUs spent waiting for data: 24 GPU-h waiting "
        "for data over 3 hours with step timings."
    )


def test_throughput_without_tokens_trained_is_named_as_gpu_hours_against_the_plan() -> None:
    unknown = tuple(
        cause("usage", "scope", "0", "no tokens trained known", gpu_hours=None) if item.cause == "scope" else item
        for item in CAUSES
    )
    steps = dict(variance_steps(overview("32.5", 0.325, unknown)))
    assert steps["more GPU-hours than planned"] == Decimal(8) and "slower throughput" not in steps


def test_a_run_with_events_has_its_downtime_gpu_hours_and_its_scope() -> None:
    conn = memory_warehouse()
    inputs = {
        "run-a": {
            "planned_hours": Decimal(1000), "actual_hours": Decimal(1200), "rate": Decimal(2),
            "compute": (Decimal(2000), Decimal(2700), Decimal(300), Decimal(400)),
            "categories": {}, "pricing": {"savings_plan": (Decimal(1000), Decimal(1900)),
                                           "on_demand": (Decimal(200), Decimal(800))},
            "waste": [("idle_after_run", Decimal(50)), ("recompute_after_failure", Decimal(30))],
            "progress": (450, Decimal("0.5"), Decimal(8)), "planned_tokens": 500,
        }
    }  # fmt: skip
    with transaction(conn):
        load(conn, inputs)
        build_variance_causes(conn)
    causes = {
        (parent, cause): (amount, gpu_hours)
        for parent, cause, amount, gpu_hours in conn.execute(
            "select parent, cause, amount, gpu_hours from variance_causes"
        ).fetchall()
    }
    # 90 % of the tokens trained: the plan needs 900 GPU-hours for them, 100 fewer than planned;
    # 200 over plan = 50 idle + 30 recompute + 8 down + (-100) scope + 212 throughput
    assert causes["usage", "scope"] == (Decimal(-200), Decimal(-100))
    assert causes["usage", "restart_downtime"] == (Decimal(16), Decimal(8))
    assert causes["usage", "idle_after_run"] == (Decimal(100), Decimal(50))
    assert causes["usage", "recompute_after_failure"] == (Decimal(60), Decimal(30))
    assert causes["usage", "throughput"] == (Decimal(424), Decimal(212))
    # savings plan at 1.90 is nearest the estimated 2: on demand at 4 is the mix
    assert causes["rate", "pricing_mix"] == (Decimal(400), Decimal(200))
    assert causes["rate", "price"] == (Decimal(-100), Decimal(1000))
