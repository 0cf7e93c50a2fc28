"""The source kinds: one line each in `KINDS`, everything else follows from it.

`Source` (an entry of `sources:` in runledger.yaml, its settings model chosen by `kind:`), the
billing sources and their readers (`pipelines/ingest/readers.py`), their raw load assets
(`pipelines/ingest/assets.py`) and schema-drift checks (`column_drift`) are derived from the
declarations listed here (`pipelines/sources/<kind>/__init__.py`, `SourceKind`).
"""

from __future__ import annotations

from functools import reduce
from operator import or_
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from pipelines.sources import (
    aws_cur,
    aws_tags,
    focus,
    gcp_billing,
    kubernetes,
    manual_costs,
    prometheus,
    run_events,
    slurm,
)
from pipelines.sources.kind import SourceKind, SourceSettings

if TYPE_CHECKING:
    from pipelines.sources.drift import ColumnDrift

KINDS: tuple[SourceKind, ...] = (
    aws_cur.KIND,
    gcp_billing.KIND,
    focus.KIND,
    manual_costs.KIND,
    aws_tags.KIND,
    run_events.KIND,
    kubernetes.KIND,
    slurm.KIND,
    prometheus.KIND,
)

KIND_NAMES = tuple(kind.name for kind in KINDS)
Source = Annotated[reduce(or_, (kind.settings for kind in KINDS)), Field(discriminator="kind")]
_BY_NAME = {kind.name: kind for kind in KINDS}
_BY_FORMAT = {source_format: kind for kind in KINDS for source_format in kind.source_formats}


def kind_of(source: SourceSettings) -> SourceKind:
    """The declaration of a configured source's kind."""
    return _BY_NAME[source.kind]


def column_drift(source_format: str, columns: list[str]) -> ColumnDrift:
    """The missing and new columns of a delivery in `source_format` (`aws_cur2`, `aws_focus`,
    `aws_legacy_csv`, `aws_legacy_parquet`, `focus`, `gcp_billing`, `manual_costs`: each billing
    kind's `source_formats`), compared by the kind that writes that format."""
    return _BY_FORMAT[source_format].drift(source_format, columns)
