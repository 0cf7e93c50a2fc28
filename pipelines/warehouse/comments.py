"""The documentation of every table, view and column, kept as `comment on` statements in the SQL
file that creates it (appended to the DDL in sql/schema/, the `comments` statement of each view in
sql/marts/): the warehouse's catalog, the Dagster column schemas and docs/warehouse.md all read it
from there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import duckdb

from pipelines.warehouse.sql import read_sql

# `comment on table|view|column <name> is '<text>'`, the text possibly written as adjacent string
# literals on several lines ('first part '\n    'second part'), which SQL concatenates.
STRING_LITERAL = r"'((?:[^']|'')*)'"
COMMENT_STATEMENT = re.compile(
    r"comment\s+on\s+(?P<kind>table|view|column)\s+(?P<target>[\w\".]+)\s+is\s+"
    rf"(?P<text>{STRING_LITERAL}(?:\s+{STRING_LITERAL})*)",
    re.IGNORECASE | re.DOTALL,
)
LEADING_SQL_COMMENTS = re.compile(r"^(\s*--[^\n]*\n)*\s*")
PARTITIONING = re.compile(r"alter\s+table\s+\w+\s+set\s+partitioned\s+by\b", re.IGNORECASE)
# `alter table <table> alter column <column> drop not null`: DuckLake refuses it for a column
# without the constraint, so it runs only where a warehouse of an earlier version still has one
DROP_NOT_NULL = re.compile(
    r"alter\s+table\s+(?P<table_name>\w+)\s+alter\s+column\s+(?P<column_name>\w+)\s+drop\s+not\s+null\s*;?\s*",
    re.IGNORECASE,
)
# `drop view if exists <name>`: a table of the name stays (DuckDB refuses to drop a table as a
# view), so a view of an earlier version goes before the table replacing it is created
DROP_VIEW = re.compile(r"drop\s+view\s+if\s+exists\s+(?P<view_name>\w+)\s*;?\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Comment:
    """One `comment on` statement.

    Attributes:
        relation: the table or view it documents, lower case.
        column: the column it documents, lower case; None for the table or view itself.
        text: the comment as stored.
        statement: the statement that stores it.
    """

    relation: str
    column: str | None
    text: str
    statement: str


def parse_comment(statement: str) -> Comment | None:
    """The comment a statement stores, or None when it is no `comment on` statement."""
    sql = LEADING_SQL_COMMENTS.sub("", statement).rstrip().rstrip(";").rstrip()
    match = COMMENT_STATEMENT.fullmatch(sql)
    if match is None:
        return None
    names = [name.strip('"').lower() for name in match["target"].split(".")]
    if match["kind"].lower() == "column":
        relation, column = names
    else:
        (relation,), column = names, None
    text = "".join(re.findall(STRING_LITERAL, match["text"])).replace("''", "'")
    return Comment(relation=relation, column=column, text=text, statement=sql)


def execute_ddl(conn: duckdb.DuckDBPyConnection, sql: str, *, partitioned: bool = False) -> list[Comment]:
    """Runs the statements of a DDL text in order, except its `comment on` statements: those are
    returned, for `apply_comments` once every table and view exists. A table's
    `alter table … set partitioned by` runs only with `partitioned` (a DuckLake catalog; an
    in-memory DuckDB has no partitions), `alter table … alter column … drop not null` only
    when the column is NOT NULL, and `drop view if exists …` only when the name is a view."""
    comments = []
    for statement in conn.extract_statements(sql):
        comment = parse_comment(statement.query)
        query = LEADING_SQL_COMMENTS.sub("", statement.query)
        if comment is not None:
            comments.append(comment)
        elif (drop := DROP_NOT_NULL.fullmatch(query)) is not None:
            if conn.execute(read_sql("ops/catalog", "is_not_null"), drop.groupdict()).fetchone()[0]:
                conn.execute(statement)
        elif (drop := DROP_VIEW.fullmatch(query)) is not None:
            if conn.execute(read_sql("ops/catalog", "is_view"), drop.groupdict()).fetchone()[0]:
                conn.execute(statement)
        elif partitioned or not PARTITIONING.match(query):
            conn.execute(statement)
    return comments


def apply_comments(conn: duckdb.DuckDBPyConnection, comments: list[Comment]) -> None:
    """Stores the comments the catalog does not hold yet: an unchanged table is not written to (a
    recreated view has lost its comments and gets them again).

    A catalog may refuse comments on a view's columns: DuckLake keeps the comments of tables, of
    their columns and of views, not of view columns, and raises a BinderException for them. Those
    are skipped; the column documentation stays in the SQL file, the Dagster column schemas and
    docs/warehouse.md, which read it from an in-memory DuckDB that stores them all.

    Raises:
        duckdb.Error: a comment names no table, view or column of the catalog.
    """
    stored = {
        (relation, column): (kind, comment)
        for kind, relation, column, comment in conn.execute(read_sql("ops/catalog", "comments")).fetchall()
    }
    for comment in comments:
        kind, text = stored.get((comment.relation, comment.column), (None, None))
        if text == comment.text:
            continue
        try:
            conn.execute(comment.statement)
        except duckdb.BinderException:
            if kind != "view column":
                raise
