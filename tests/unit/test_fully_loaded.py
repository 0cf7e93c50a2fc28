"""`run_costs_fully_loaded`: each run's direct cost plus its exact share of the spend no run owns,
split by largest remainder (the `largest_remainder_split` macro) among the runs of the cluster,
provider or period the spend belongs to."""

from datetime import datetime
from decimal import Decimal

import duckdb

from pipelines.warehouse.sql import read_sql

OCTOBER = datetime(2026, 10, 1)
AWS, GCP, AZURE = "Amazon Web Services", "Google Cloud", "Microsoft"


def allocate(
    conn: duckdb.DuckDBPyConnection,
    training_run: str | None,
    effective: str,
    *,
    provider: str = AWS,
    method: str = "tag",
    cluster: str | None = None,
    currency: str = "USD",
) -> None:
    conn.execute(
        "insert into cost_allocations (x_LineItemKey, x_SourceName, BillingPeriodStart, BillingCurrency, ProviderName, "
        "x_CostCategory, training_run, allocation_method, allocation_ratio, billed_cost, effective_cost, gpu_hours, "
        "cluster) values (gen_random_uuid(), 'src', $period, $currency, $provider, 'compute', $run, $method, 1, "
        "$cost, $cost, 0, $cluster)",
        {
            "period": OCTOBER,
            "currency": currency,
            "provider": provider,
            "run": training_run,
            "method": method,
            "cost": Decimal(effective),
            "cluster": cluster,
        },
    )


def unattributed(
    conn: duckdb.DuckDBPyConnection, spend_kind: str, effective: str, *, provider: str = AWS, currency: str = "USD"
) -> None:
    allocate(conn, None, effective, provider=provider, method="unattributed", currency=currency)
    conn.execute(
        "insert into unattributed_costs (provider, billing_period, currency, spend_kind, effective_cost) "
        "values ($provider, $period, $currency, $kind, $cost)",
        {"provider": provider, "period": OCTOBER.date(), "currency": currency, "kind": spend_kind, "cost": effective},
    )


def test_largest_remainder_split_gives_the_units_left_to_the_largest_remainders(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    # 10 among weights 1:1:1 is 3.3333333333 each and 1e-10 left: it goes to the first member; 100
    # among 2:1 is 66.6666666666 (remainder 2/3) and 33.3333333333 (1/3): the unit goes to the 2;
    # weights all 0 split equally; a negative amount splits its magnitude and keeps its sign
    rows = warehouse.execute(
        """
        with parts (split_key, member, amount, weight) as (
            values ('thirds', 'a', 10, 1), ('thirds', 'b', 10, 1), ('thirds', 'c', 10, 1),
                ('two to one', 'a', 100, 2), ('two to one', 'b', 100, 1),
                ('no weight', 'a', 1, 0), ('no weight', 'b', 1, 0),
                ('credit', 'a', -10, 1), ('credit', 'b', -10, 2)
        )
        select split_key, member, part from largest_remainder_split(parts) order by split_key, member
        """
    ).fetchall()
    assert rows == [
        ("credit", "a", Decimal("-3.3333333333")),
        ("credit", "b", Decimal("-6.6666666667")),
        ("no weight", "a", Decimal("0.5")),
        ("no weight", "b", Decimal("0.5")),
        ("thirds", "a", Decimal("3.3333333334")),
        ("thirds", "b", Decimal("3.3333333333")),
        ("thirds", "c", Decimal("3.3333333333")),
        ("two to one", "a", Decimal("66.6666666667")),
        ("two to one", "b", Decimal("33.3333333333")),
    ]


def test_fully_loaded_costs_split_each_kind_among_the_runs_it_belongs_to(
    warehouse: duckdb.DuckDBPyConnection,
) -> None:
    allocate(warehouse, "a", "25")
    allocate(warehouse, "a", "5", cluster="k1", method="cluster")
    allocate(warehouse, "b", "10")
    allocate(warehouse, "credits-only", "-5")  # a run with only credits weighs 0: no division by 0
    allocate(warehouse, "g", "20", provider=GCP)
    allocate(warehouse, None, "3", cluster="k1", method="idle_capacity")  # k1's idle: a alone held k1
    unattributed(warehouse, "tax", "4")  # AWS: a 30, b 10 → 3 and 1
    unattributed(warehouse, "commitment", "10")  # 7.5 and 2.5
    unattributed(warehouse, "support", "1", provider=GCP)  # GCP's runs: g
    unattributed(warehouse, "credit", "-1", provider=GCP)
    unattributed(warehouse, "resource", "6", provider=AZURE)  # no Azure run: all runs, 30:10:0:20
    unattributed(warehouse, "tax", "7", currency="EUR")  # no EUR run: it stays out
    warehouse.execute(read_sql("marts/run_costs_fully_loaded", "insert"))

    rows = warehouse.execute(
        "select training_run, currency, direct_cost, idle_capacity_share, unused_commitment_share, tax_share, "
        "support_share, other_unattributed_share, fully_loaded_cost from run_costs_fully_loaded order by training_run"
    ).fetchall()
    d = Decimal
    assert rows == [
        ("a", "USD", d(30), d(3), d("7.5"), d(3), d(0), d(3), d("46.5")),
        ("b", "USD", d(10), d(0), d("2.5"), d(1), d(0), d(1), d("14.5")),
        ("credits-only", "USD", d(-5), d(0), d(0), d(0), d(0), d(0), d(-5)),
        ("g", "USD", d(20), d(0), d(0), d(0), d(1), d(1), d(22)),  # other: the credit -1, Azure 2
    ]
    (total,) = warehouse.execute(
        "select sum(effective_cost) from cost_allocations where BillingCurrency = 'USD'"
    ).fetchone()
    assert sum(row[-1] for row in rows) == total == d(78)
    # an analysis: the allocations are unchanged
    assert warehouse.execute("select count(*) from cost_allocations where training_run is null").fetchone() == (7,)
