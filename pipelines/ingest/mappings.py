"""Mapping tables kept as data: cost categories and GPU instance types.

`pipelines/data/cost_categories.csv` maps (provider, service, service category, detail, charge
category) globs to an x_CostCategory, first matching row wins; a config file given as
`cost_categories:` is read first, so its rows override the built-in ones.
`pipelines/data/gpu_instance_types.csv` gives the GPUs per instance type.
`pipelines/data/aws_service_categories.csv` gives the FOCUS ServiceCategory of AWS service codes.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
COST_CATEGORIES = ("compute", "storage", "network", "data", "monitoring", "support", "tax", "other")
RULE_COLUMNS = ("provider", "service", "service_category", "detail", "charge_category")
RULE_TARGETS = {
    "provider": "ProviderName",
    "service": "_service_key",
    "service_category": "ServiceCategory",
    "detail": "_detail",
    "charge_category": "ChargeCategory",
}


class MappingError(ValueError):
    """A mapping file is malformed; the message names the file and row."""


@dataclass(frozen=True)
class CategoryRule:
    patterns: dict[str, str]
    cost_category: str


def glob_regex(pattern: str) -> str:
    """A case-insensitive, anchored regex for a glob with `*` and `?`."""
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return f"(?is)^{body}$"


def read_category_rules(override: Path | None = None) -> list[CategoryRule]:
    """The override file's rules (if any) followed by the built-in ones."""
    files = ([override] if override else []) + [DATA_DIR / "cost_categories.csv"]
    rules: list[CategoryRule] = []
    for file in files:
        with file.open(newline="") as handle:
            reader = csv.DictReader(handle)
            missing = set(RULE_COLUMNS + ("cost_category",)) - set(reader.fieldnames or ())
            if missing:
                raise MappingError(f"{file}: missing columns {', '.join(sorted(missing))}")
            for line, row in enumerate(reader, start=2):
                category = row["cost_category"].strip()
                if category not in COST_CATEGORIES:
                    raise MappingError(
                        f"{file}: row {line}: cost_category {category!r} is not one of {', '.join(COST_CATEGORIES)}"
                    )
                patterns = {c: row[c].strip() or "*" for c in RULE_COLUMNS}
                rules.append(CategoryRule(patterns, category))
    return rules


def glob_like(pattern: str) -> str | None:
    """A glob with `*` and `?` as a SQL LIKE pattern with `\\` as escape character (DuckDB's
    `ilike_escape` matches it case-insensitively); None for `*`, which matches anything."""
    if pattern == "*":
        return None
    escaped = (c if c not in "\\%_" else "\\" + c for c in pattern)
    return "".join("%" if c == "*" else "_" if c == "?" else c for c in escaped)


def glob_condition(column: str, pattern: str) -> pl.Expr:
    """Whether a column (NULL as '') matches a glob, case-insensitively.

    Most rules are a literal with `*` at either end (`*BoxUsage*`, `AmazonS3`): those compare the
    lower-cased column with plain string operations, several times faster than a regex per rule
    over every line; other globs (`?`, an inner `*`, non-ASCII text) use `glob_regex`.
    """
    text = pl.col(column).fill_null("")
    literal = pattern.strip("*")
    if not pattern.isascii() or "*" in literal or "?" in literal:
        return text.str.contains(glob_regex(pattern))
    lowered, literal = text.str.to_lowercase(), literal.lower()
    match pattern.startswith("*"), pattern.endswith("*"):
        case True, True:
            return lowered.str.contains(literal, literal=True)
        case True, False:
            return lowered.str.ends_with(literal)
        case False, True:
            return lowered.str.starts_with(literal)
        case _:
            return lowered == literal


def cost_category_expr(rules: list[CategoryRule]) -> pl.Expr:
    """x_CostCategory from the rules, the first matching one winning, else 'other'; needs the
    columns named in RULE_TARGETS. One when/then chain: one output column, not one per rule."""
    chain = pl
    for rule in rules:
        conditions = [
            glob_condition(RULE_TARGETS[column], pattern) for column, pattern in rule.patterns.items() if pattern != "*"
        ]
        chain = chain.when(pl.all_horizontal(conditions) if conditions else pl.lit(True)).then(
            pl.lit(rule.cost_category)
        )
    return chain.otherwise(pl.lit("other")) if rules else pl.lit("other")


def gpu_instance_types() -> pl.LazyFrame:
    """provider, instance type (lower case) and GPUs per instance."""
    return pl.scan_csv(
        DATA_DIR / "gpu_instance_types.csv",
        schema={"provider": pl.String, "instance_type": pl.String, "gpus": pl.Int32, "accelerator": pl.String},
    ).select(
        pl.col("provider").alias("_gpu_provider"),
        pl.col("instance_type").str.to_lowercase().alias("_gpu_instance_type"),
        pl.col("gpus").alias("x_GpuCount"),
    )


def with_gpu_count(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Adds x_GpuCount by (ProviderName, x_InstanceType)."""
    return frame.with_columns(
        pl.col("x_InstanceType").str.to_lowercase().alias("_gpu_instance_type"),
        pl.col("ProviderName").alias("_gpu_provider"),
    ).join(gpu_instance_types(), on=["_gpu_provider", "_gpu_instance_type"], how="left", maintain_order="left")
