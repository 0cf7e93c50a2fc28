"""The configured tag keys of each attribution dimension as a working table of one connection
(`attribution_keys`), read wherever keys are matched to dimensions: a line's tags (attribution)
and a job's labels (the scheduler sources' intervals)."""

from collections.abc import Mapping

import duckdb

from pipelines.warehouse.sql import read_sql


def load_dimension_keys(conn: duckdb.DuckDBPyConnection, dimensions: Mapping[str, list[str]]) -> None:
    """Creates (or replaces) `attribution_keys`: one row per (dimension, tag key, priority).

    Args:
        conn: a warehouse connection.
        dimensions: `attribution.dimensions`, each dimension's tag keys in priority order.
    """
    conn.execute(read_sql("attribution/working_tables", "create_dimension_keys"))
    for dimension, keys in dimensions.items():
        for priority, key in enumerate(keys):
            conn.execute(
                read_sql("attribution/working_tables", "insert_dimension_key"),
                {"dimension": dimension, "tag_key": key, "priority": priority},
            )
