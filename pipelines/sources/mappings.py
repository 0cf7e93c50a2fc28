"""Mapping tables kept as data: cost categories, GPU instance types and AWS service categories,
and their loading into the DuckDB mapping of a delivery (`sql/staging/lookups.sql`).

`pipelines/data/cost_categories.csv` maps (provider, service, service category, detail, charge
category) globs to an x_CostCategory, first matching row wins; a config file given as
`cost_categories:` is read first, so its rows override the built-in ones. A glob's `*` and `?`
match any text and any one character, case-insensitively (`sql/staging/cost_categories.sql`).
`pipelines/data/gpu_instance_types.csv` gives the GPUs per instance type; the config's
`gpu_instance_types:` (a mapping or a CSV file of instance_type, gpus) adds or overrides types.
`pipelines/data/aws_service_categories.csv` gives the FOCUS ServiceCategory of AWS service codes.
`pipelines/data/service_subcategories.csv` maps (provider, service, detail) globs to a FOCUS
ServiceSubcategory of a ServiceCategory, first matching row of the line's category wins.
`pipelines/data/gcp_regions.csv` gives the display names of GCP regions.
`pipelines/data/currencies.csv` lists the ISO 4217 currency codes.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import duckdb

from pipelines.warehouse.sql import read_sql

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
# The values of x_CostCategory, in the order reports list them: the categories of a cloud bill, then
# those of costs no cloud bills (people, labelling, tools, own hardware, moves, forgone returns),
# which budgets plan as `fixed:` lines and a `manual_costs` source loads.
COST_CATEGORIES = (
    "compute", "storage", "network", "data", "monitoring", "support", "tax", "other",
    "labor", "data_labeling", "tooling", "on_prem", "migration", "opportunity",
)  # fmt: skip
RULE_COLUMNS = ("provider", "service", "service_category", "detail", "charge_category")
SUBCATEGORY_GLOBS = ("provider", "service", "detail")


class MappingError(ValueError):
    """A mapping file is malformed; the message names the file and row."""


@dataclass(frozen=True)
class CategoryRule:
    patterns: dict[str, str]
    cost_category: str


@dataclass(frozen=True)
class GpuInstanceType:
    """A configured instance type and its GPUs, looked up before the built-in table."""

    instance_type: str
    gpus: int


MappingRule = CategoryRule | GpuInstanceType
"""What a delivery is mapped with besides its files: cost category rules and configured GPU instance types."""


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


@cache
def currency_codes() -> frozenset[str]:
    """The ISO 4217 currency codes (`pipelines/data/currencies.csv`)."""
    with (DATA_DIR / "currencies.csv").open(newline="") as handle:
        return frozenset(row["currency"] for row in csv.DictReader(handle))


def currency_problem(code: str) -> str | None:
    """The one rule of a currency as a file gives it (a budget, a manual cost line): None for an
    ISO 4217 code in capitals, else what is wrong with it."""
    if code not in currency_codes():
        return "must be a 3-letter ISO 4217 code in capitals such as USD"
    return None


def read_mapping_rules(
    cost_categories: Path | None = None, gpu_instance_types: Mapping[str, int] | None = None
) -> list[MappingRule]:
    """The cost category rules (`read_category_rules`) followed by the configured GPU instance
    types (`RunLedgerConfig.gpu_instance_table`)."""
    configured = [GpuInstanceType(name, gpus) for name, gpus in (gpu_instance_types or {}).items()]
    return [*read_category_rules(cost_categories), *configured]


def glob_like(pattern: str) -> str | None:
    """A glob with `*` and `?` as a SQL LIKE pattern with `\\` as escape character (DuckDB's
    `ilike_escape` matches it case-insensitively); None for `*`, which matches anything."""
    if pattern == "*":
        return None
    escaped = (c if c not in "\\%_" else "\\" + c for c in pattern)
    return "".join("%" if c == "*" else "_" if c == "?" else c for c in escaped)


def fill_mapping_tables(conn: duckdb.DuckDBPyConnection, mapping_rules: Sequence[MappingRule]) -> None:
    """Fills the mapping tables of `sql/staging/macros.sql` on the connection: the cost category
    rules as LIKE patterns, the GPU instance types (the configured ones of `mapping_rules` before
    the built-in ones), the AWS service categories, the service subcategory rules and the GCP
    region names."""
    rules = [rule for rule in mapping_rules if isinstance(rule, CategoryRule)]
    gpu_types = [rule for rule in mapping_rules if isinstance(rule, GpuInstanceType)]
    conn.execute(
        read_sql("staging/lookups", "category_rules"),
        {
            **{column: [glob_like(rule.patterns[column]) for rule in rules] for column in RULE_COLUMNS},
            "cost_categories": [rule.cost_category for rule in rules],
        },
    )
    conn.execute(
        read_sql("staging/lookups", "gpu_instance_types"),
        {
            "file": str(DATA_DIR / "gpu_instance_types.csv"),
            "instance_types": [gpu_type.instance_type for gpu_type in gpu_types],
            "gpus": [gpu_type.gpus for gpu_type in gpu_types],
        },
    )
    conn.execute(
        read_sql("staging/lookups", "aws_service_categories"), {"file": str(DATA_DIR / "aws_service_categories.csv")}
    )
    with (DATA_DIR / "service_subcategories.csv").open(newline="") as handle:
        subcategories = list(csv.DictReader(handle))
    conn.execute(
        read_sql("staging/lookups", "service_subcategory_rules"),
        {
            **{column: [glob_like(row[column]) for row in subcategories] for column in SUBCATEGORY_GLOBS},
            "service_category": [row["service_category"] for row in subcategories],
            "service_subcategory": [row["service_subcategory"] for row in subcategories],
        },
    )
    conn.execute(read_sql("staging/lookups", "gcp_region_names"), {"file": str(DATA_DIR / "gcp_regions.csv")})
