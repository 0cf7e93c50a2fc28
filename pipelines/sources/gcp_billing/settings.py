"""The settings of a `gcp_billing` source."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from connectors.gcp.settings import BIGQUERY_TABLE_ID
from pipelines.sources.kind import SourceSettings


class GcpBillingSource(SourceSettings):
    """The GCP Cloud Billing export: a BigQuery table or a local folder of its files."""

    kind: Literal["gcp_billing"]
    table: str | None = None
    path: str | None = None
    project: str | None = None  # runs the BigQuery jobs; default the table's project
    endpoint_url: str | None = None  # a BigQuery emulator (unauthenticated), for tests

    @model_validator(mode="after")
    def _one_location(self) -> GcpBillingSource:
        if (self.table is None) == (self.path is None):
            raise ValueError("give exactly one of `table` (BigQuery) or `path` (local folder)")
        if self.path is not None and (self.project or self.endpoint_url):
            raise ValueError("`project` and `endpoint_url` apply to `table` (BigQuery) only")
        if self.table is not None and not BIGQUERY_TABLE_ID.match(self.table):
            raise ValueError(f"table {self.table!r} is not a BigQuery table id project.dataset.table")
        return self

    def local_path(self) -> tuple[str, str] | None:
        return ("path", self.path) if self.path else None
