"""Builds `cost_allocations` for one billing period from `focus_line_items`.

Every step is set-based SQL over the whole period (files under `sql/`); Python only loads the
configured tag keys and shared-cost rules into temporary tables and runs the statements in order.
The working tables key a line by `line_row`, its `focus_line_items` rowid: stable within the
period's one transaction, and an integer join is far cheaper than one on the `x_LineItemKey`
string.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import duckdb

from pipelines.attribution.settings import DEFAULT_DIMENSIONS, CommitmentRule, SharedRule
from pipelines.orchestration.partitions import partition_key
from pipelines.warehouse.connection import transactions, unordered_inserts
from pipelines.warehouse.conservation import ConservationError
from pipelines.warehouse.dimension_keys import load_dimension_keys
from pipelines.warehouse.sql import dict_rows, read_sql
from pipelines.warehouse.step_inputs import StepInputs, step_inputs

ALLOCATIONS_STEP = "cost_allocations"  # its step_inputs rows: one per billing period
# what sql/attribution/tag_keys.sql names GKE cost allocation's cluster and namespace label keys
GKE_LABELS = {"gke:cluster": "gke_cluster_keys", "gke:namespace": "gke_namespace_keys"}


def _load_shared_rules(conn: duckdb.DuckDBPyConnection, rules: Sequence[SharedRule]) -> None:
    conn.execute(read_sql("attribution/working_tables", "create_shared_rules"))
    for priority, rule in enumerate(rules):
        conn.execute(
            read_sql("attribution/working_tables", "insert_shared_rule"),
            {"rule_name": rule.name, "priority": priority, "split": rule.split, "condition_count": len(rule.match)},
        )
        for column, pattern in rule.match.items():
            conn.execute(
                read_sql("attribution/working_tables", "insert_shared_rule_condition"),
                {"rule_name": rule.name, "column_name": column, "pattern": pattern},
            )
        for training_run, weight in (rule.weights or {}).items():
            conn.execute(
                read_sql("attribution/working_tables", "insert_shared_rule_weight"),
                {"rule_name": rule.name, "training_run": training_run, "weight": weight},
            )


def _load_commitment_rules(conn: duckdb.DuckDBPyConnection, rules: Sequence[CommitmentRule]) -> None:
    conn.execute(read_sql("attribution/working_tables", "create_commitment_rules"))
    for priority, rule in enumerate(rules):
        conn.execute(
            read_sql("attribution/working_tables", "insert_commitment_rule"),
            {"rule_name": rule.name, "priority": priority, "split": rule.split, "pattern": rule.commitment},
        )
        for training_run, weight in (rule.weights or {}).items():
            conn.execute(
                read_sql("attribution/working_tables", "insert_commitment_rule_weight"),
                {"rule_name": rule.name, "training_run": training_run, "weight": weight},
            )


def allocation_inputs(
    conn: duckdb.DuckDBPyConnection,
    billing_period: date,
    dimensions: dict[str, list[str]],
    shared_rules: Sequence[SharedRule] = (),
    commitment_rules: Sequence[CommitmentRule] = (),
    share_idle: bool = False,
) -> StepInputs:
    """What the period's allocations are computed from: its loads, the run registry, the resource
    tag snapshots, the scheduler sources' intervals and the attribution settings
    (sql/ops/allocation_inputs.sql). Commitment rules and idle capacity sharing count only when in
    force, so allocations made without them stay current."""
    settings = repr((sorted(dimensions.items()), [rule.model_dump(mode="json") for rule in shared_rules]))
    if commitment_rules:
        settings += repr([rule.model_dump(mode="json") for rule in commitment_rules])
    if share_idle:
        settings += "idle_capacity.share=proportional"
    return step_inputs(
        conn,
        ALLOCATIONS_STEP,
        partition_key(billing_period),
        read_sql("ops/allocation_inputs", "digest"),
        {"billing_period": billing_period, "settings": settings},
    )


def allocate_period_if_changed(
    conn: duckdb.DuckDBPyConnection,
    billing_period: date,
    dimensions: dict[str, list[str]],
    shared_rules: Sequence[SharedRule] = (),
    commitment_rules: Sequence[CommitmentRule] = (),
    share_idle: bool = False,
) -> list[dict] | None:
    """Recomputes the period's allocations unless they were computed from the same inputs.

    Returns:
        The per-line conservation check of the new allocations (`check_period`), or None when the
        allocations were kept (they passed that check when they were written).

    Raises:
        ConservationError: the recomputed allocations do not balance; nothing was replaced.
    """
    inputs = allocation_inputs(conn, billing_period, dimensions, shared_rules, commitment_rules, share_idle)
    if inputs.unchanged(conn):
        return None
    return allocate_period(
        conn, billing_period, dimensions, shared_rules, commitment_rules, share_idle=share_idle, inputs=inputs
    )


def allocate_period(
    conn: duckdb.DuckDBPyConnection,
    billing_period: date,
    dimensions: dict[str, list[str]],
    shared_rules: Sequence[SharedRule] = (),
    commitment_rules: Sequence[CommitmentRule] = (),
    share_idle: bool = False,
    inputs: StepInputs | None = None,
) -> list[dict]:
    """Replaces the period's allocations atomically, once they pass the per-line conservation
    check: an unbalanced line rolls the whole replacement back.

    Args:
        conn: a writable warehouse connection.
        billing_period: first day of the billing month.
        dimensions: tag keys per dimension, in priority order (`attribution.dimensions`).
        shared_rules: shared-cost rules in the order they apply (`attribution.shared`).
        commitment_rules: the commitment chargeback rules in force, in the order they apply
            (`attribution.commitments`; none while its chargeback is off).
        share_idle: charge each day's idle cluster capacity to the runs that held the cluster
            (`attribution.idle_capacity.share: proportional`).
        inputs: what the allocations are computed from (`allocation_inputs`), recorded with them,
            in the same transaction, when given.

    Returns:
        The per-line conservation check of the new allocations (`check_period`).

    Raises:
        ConservationError: a line item's allocations do not sum to it; the message names the
            period, the sources and how many lines.
    """
    load_dimension_keys(conn, dimensions)
    _load_shared_rules(conn, shared_rules)
    _load_commitment_rules(conn, commitment_rules)
    params = {"billing_period": billing_period}
    with unordered_inserts(conn):
        checks = _replace_allocations(
            conn, params, inputs, charge_commitments=bool(commitment_rules), share_idle=share_idle
        )
    conn.execute(read_sql("attribution/working_tables", "drop"))
    return checks


def _replace_allocations(
    conn: duckdb.DuckDBPyConnection, params: dict, inputs: StepInputs | None, charge_commitments: bool, share_idle: bool
) -> list[dict]:
    """The attribution steps and their conservation check in one transaction, with the inputs
    when given; the commitment chargeback's statements run only when rules are in force, the
    cluster step's only when a scheduler source gave anything."""
    for attempt in transactions(conn):
        with attempt:
            conn.execute(read_sql("attribution/cost_allocations", "delete_period"), params)
            conn.execute(read_sql("attribution/line_dimensions"), params | _dimension_tag_keys(conn, params))
            _cluster_shares(conn, params, share_idle)
            conn.execute(read_sql("attribution/shares"), params)
            if charge_commitments:
                conn.execute(read_sql("attribution/commitment_matches", "match"), params)
                conn.execute(read_sql("attribution/commitment_matches", "drop_from_shares"))
            conn.execute(read_sql("attribution/shared_matches", "match"), params)
            conn.execute(read_sql("attribution/shared_matches", "drop_from_shares"))
            # steps 1-3 and 5 are written first: step 4's proportional split reads the runs' cost from them
            conn.execute(read_sql("attribution/cost_allocations_insert"), params)
            conn.execute(read_sql("attribution/shared_shares"), params)
            if charge_commitments:
                conn.execute(read_sql("attribution/commitment_shares"), params)
            conn.execute(read_sql("attribution/cost_allocations_insert"), params)
            checks = check_period(conn, params["billing_period"])
            unbalanced = [check for check in checks if check["unbalanced_line_items"]]
            if unbalanced:
                raise ConservationError(
                    f"billing period {params['billing_period']:%Y-%m}: "
                    + "; ".join(
                        f"source {check['source_name']} ({check['currency']}): {check['unbalanced_line_items']:,} of "
                        f"{check['line_items']:,} line items have allocations that do not sum to them"
                        for check in unbalanced
                    )
                    + "; the previous allocations are kept"
                )
            if inputs is not None:
                inputs.record(conn)
    return checks


def _cluster_shares(conn: duckdb.DuckDBPyConnection, params: dict, share_idle: bool) -> None:
    """The cluster step's shares (`cluster_shares`, sql/attribution/cluster_shares.sql): the
    period's node lines split among the jobs (or pods of split cost allocation data) that held
    them, or an empty table when no scheduler source gave anything and the bill has no split
    data."""
    ((any_cluster,),) = conn.execute(read_sql("attribution/cluster_shares", "any_cluster")).fetchall()
    ((any_split,),) = conn.execute(read_sql("attribution/cluster_shares", "any_split"), params).fetchall()
    if not (any_cluster or any_split):
        conn.execute(read_sql("attribution/cluster_shares", "none"))
        return
    conn.execute(read_sql("attribution/cluster_shares", "node_line_usage"), params)
    if any_split:
        conn.execute(read_sql("attribution/cluster_shares", "split_line_usage"), params)
    conn.execute(read_sql("attribution/cluster_shares", "shares"), {"share_idle": share_idle})


def over_capacity(conn: duckdb.DuckDBPyConnection, billing_period: date) -> list[dict]:
    """The period's node lines whose jobs held more GPUs (or CPUs) than the node has, which the
    cluster step scaled down to its capacity: cluster, resource, charge start, load (held ÷
    capacity) and jobs. None when no scheduler source gave anything."""
    ((any_cluster,),) = conn.execute(read_sql("attribution/cluster_shares", "any_cluster")).fetchall()
    if not any_cluster:
        return []
    conn.execute(read_sql("attribution/cluster_shares", "node_line_usage"), {"billing_period": billing_period})
    try:
        return dict_rows(conn.execute(read_sql("attribution/cluster_shares", "over_capacity")))
    finally:
        conn.execute(read_sql("attribution/working_tables", "drop"))


def _dimension_tag_keys(conn: duckdb.DuckDBPyConnection, params: dict) -> dict[str, list]:
    """`$<dimension>_keys`, `$custom_dimension_keys`, `$gke_cluster_keys` and `$gke_namespace_keys`
    of sql/attribution/line_dimensions.sql: the period's tag keys naming each built-in dimension, in
    priority order (an empty list where the bill has none), those of each custom dimension the bill
    has keys of, and the keys of GKE cost allocation's cluster and namespace labels."""
    found = dict(conn.execute(read_sql("attribution/tag_keys"), params).fetchall())
    keys = {f"{dimension}_keys": found.pop(dimension, []) for dimension in DEFAULT_DIMENSIONS}
    keys |= {parameter: found.pop(label, []) for label, parameter in GKE_LABELS.items()}
    return keys | {"custom_dimension_keys": [{"dimension": name, "keys": tags} for name, tags in found.items()]}


def check_period(conn: duckdb.DuckDBPyConnection, billing_period: date) -> list[dict]:
    """Per source and currency: line items, allocation rows, both totals (`period_totals`), and
    the line items whose allocations do not sum to them."""
    unbalanced = {
        (row["source_name"], row["currency"]): row["unbalanced_line_items"]
        for row in _rows(conn, "period_unbalanced_lines", billing_period)
    }
    return [
        {**totals, "unbalanced_line_items": unbalanced.get((totals["source_name"], totals["currency"]), 0)}
        for totals in period_totals(conn, billing_period)
    ]


def period_totals(conn: duckdb.DuckDBPyConnection, billing_period: date) -> list[dict]:
    """Per source and currency: line items, allocation rows and both totals, without the
    per-line join of `check_period` (for allocations kept from an earlier run)."""
    return _rows(conn, "period_totals", billing_period)


def _rows(conn: duckdb.DuckDBPyConnection, statement: str, billing_period: date) -> list[dict]:
    return dict_rows(
        conn.execute(read_sql("attribution/cost_allocations", statement), {"billing_period": billing_period})
    )
