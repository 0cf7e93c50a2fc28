"""Builds `cost_allocations` for one billing period from `focus_line_items` (SPEC §6).

Every step is set-based SQL over the whole period (files under `sql/`); Python only loads the
configured tag keys and shared-cost rules into temporary tables and runs the statements in order.
The working tables key a line by `line_row`, its `focus_line_items` rowid: stable within the
period's one transaction, and an integer join is far cheaper than one on the `x_LineItemKey`
string.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timezone

import duckdb

from pipelines.config import DEFAULT_DIMENSIONS, SharedRule
from pipelines.sqlfiles import read_sql
from pipelines.warehouse import transaction, unordered_inserts

def _load_dimension_keys(conn: duckdb.DuckDBPyConnection, dimensions: dict[str, list[str]]) -> None:
    conn.execute(read_sql("attribution_keys_create"))
    for dimension, keys in dimensions.items():
        for priority, key in enumerate(keys):
            conn.execute(read_sql("attribution_keys_insert"), {"dimension": dimension, "tag_key": key, "priority": priority})


def _load_shared_rules(conn: duckdb.DuckDBPyConnection, rules: Sequence[SharedRule]) -> None:
    conn.execute(read_sql("attribution_shared_rules_create"))
    for priority, rule in enumerate(rules):
        conn.execute(
            read_sql("attribution_shared_rules_insert"),
            {"rule_name": rule.name, "priority": priority, "split": rule.split, "condition_count": len(rule.match)},
        )
        for column, pattern in rule.match.items():
            conn.execute(
                read_sql("attribution_shared_rule_conditions_insert"),
                {"rule_name": rule.name, "column_name": column, "pattern": pattern},
            )
        for training_run, weight in (rule.weights or {}).items():
            conn.execute(
                read_sql("attribution_shared_rule_weights_insert"),
                {"rule_name": rule.name, "training_run": training_run, "weight": weight},
            )


def inputs_digest(
    conn: duckdb.DuckDBPyConnection,
    billing_period: date,
    dimensions: dict[str, list[str]],
    shared_rules: Sequence[SharedRule] = (),
) -> str:
    """The digest of everything the period's allocations are computed from: its loads, the run
    registry, the resource tag snapshots and the attribution settings."""
    settings = repr((sorted(dimensions.items()), [rule.model_dump(mode="json") for rule in shared_rules]))
    (digest,) = conn.execute(
        read_sql("allocation_inputs_digest"), {"billing_period": billing_period, "settings": settings}
    ).fetchone()
    return digest


def allocate_period_if_changed(
    conn: duckdb.DuckDBPyConnection,
    billing_period: date,
    dimensions: dict[str, list[str]],
    shared_rules: Sequence[SharedRule] = (),
) -> bool:
    """Recomputes the period's allocations unless they were computed from the same inputs.

    Returns:
        True when the allocations were recomputed.
    """
    digest = inputs_digest(conn, billing_period, dimensions, shared_rules)
    recorded = conn.execute(read_sql("allocation_inputs_recorded"), {"billing_period": billing_period}).fetchone()
    if recorded and recorded[0] == digest:
        return False
    allocate_period(conn, billing_period, dimensions, shared_rules, inputs_digest=digest)
    return True


def allocate_period(
    conn: duckdb.DuckDBPyConnection,
    billing_period: date,
    dimensions: dict[str, list[str]],
    shared_rules: Sequence[SharedRule] = (),
    inputs_digest: str | None = None,
) -> None:
    """Replaces the period's allocations atomically.

    Args:
        conn: a writable warehouse connection.
        billing_period: first day of the billing month.
        dimensions: tag keys per dimension, in priority order (`attribution.dimensions`).
        shared_rules: shared-cost rules in the order they apply (`attribution.shared`).
        inputs_digest: recorded with the allocations, in the same transaction, when given.
    """
    _load_dimension_keys(conn, dimensions)
    _load_shared_rules(conn, shared_rules)
    params = {"billing_period": billing_period}
    with unordered_inserts(conn):
        _replace_allocations(conn, params, inputs_digest)
    conn.execute(read_sql("attribution_drop_temp_tables"))


def _replace_allocations(conn: duckdb.DuckDBPyConnection, params: dict, inputs_digest: str | None) -> None:
    """The SQL steps of SPEC §6 in one transaction, with the inputs digest when given."""
    with transaction(conn):
        conn.execute(read_sql("cost_allocations_delete_billing_period"), params)
        conn.execute(read_sql("attribution_line_dimensions"), params | _dimension_tag_keys(conn, params))
        conn.execute(read_sql("attribution_shares"), params)
        conn.execute(read_sql("attribution_shared_matches"), params)
        conn.execute(read_sql("attribution_shares_drop_shared"))
        # steps 1-3 and 5 are written first: step 4's proportional split reads the runs' cost from them
        conn.execute(read_sql("cost_allocations"), params)
        conn.execute(read_sql("attribution_shared_shares"), params)
        conn.execute(read_sql("cost_allocations"), params)
        if inputs_digest is not None:
            conn.execute(
                read_sql("allocation_inputs_replace"),
                params | {"inputs_digest": inputs_digest, "allocated_at": datetime.now(timezone.utc).replace(tzinfo=None)},
            )


def _dimension_tag_keys(conn: duckdb.DuckDBPyConnection, params: dict) -> dict[str, list[str]]:
    """`$<dimension>_keys` of sql/attribution_line_dimensions.sql: the period's tag keys naming
    each dimension, in priority order (an empty list where the bill has none)."""
    found = dict(conn.execute(read_sql("attribution_tag_keys"), params).fetchall())
    return {f"{dimension}_keys": found.get(dimension, []) for dimension in DEFAULT_DIMENSIONS}


def check_period(conn: duckdb.DuckDBPyConnection, billing_period: date) -> list[dict]:
    """Per source and currency: line items, allocation rows, unbalanced lines, and both totals."""
    cursor = conn.execute(read_sql("cost_allocations_period_check"), {"billing_period": billing_period})
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]
