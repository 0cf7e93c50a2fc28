"""Where the lake lives (`warehouse:`): a folder, or a catalog and data path of their own."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from pipelines.config_rules import HostName, StrictModel

LAKE_FOLDER = ".runledger/lake"
# Where an earlier RunLedger kept its warehouse file by default: found there, it is converted once
# by `runledger migrate`.
LEGACY_WAREHOUSE_FILE = ".runledger/warehouse.duckdb"
DATABASE_NAME = re.compile(r"^[A-Za-z0-9_\-]+$")


class PostgresCatalog(StrictModel):
    """A DuckLake catalog in PostgreSQL; user and password come from libpq's environment
    (PGUSER, PGPASSWORD, ~/.pgpass), never from this file."""

    host: HostName
    port: int = Field(default=5432, gt=0, lt=65536)
    dbname: str

    @field_validator("dbname")
    @classmethod
    def _dbname(cls, value: str) -> str:
        if not DATABASE_NAME.match(value):
            raise ValueError(f"{value!r} is not a database name (letters, digits, _ and -)")
        return value

    @property
    def connection_string(self) -> str:
        return f"host={self.host} port={self.port} dbname={self.dbname}"


class LakeCatalog(StrictModel):
    """Where the lake's catalog lives: `postgres:` (team setup) or `sqlite:` (a file)."""

    postgres: PostgresCatalog | None = None
    sqlite: str | None = None

    @model_validator(mode="after")
    def _one_catalog(self) -> LakeCatalog:
        if (self.postgres is None) == (self.sqlite is None):
            raise ValueError("give exactly one of `postgres` or `sqlite`")
        return self


class TeamWarehouse(StrictModel):
    """A lake whose catalog and data live apart: e.g. catalog in PostgreSQL, data in S3."""

    catalog: LakeCatalog
    data_path: str = Field(min_length=1)
    endpoint_url: str | None = None  # an S3-compatible store (or a test server), e.g. http://127.0.0.1:9000

    @field_validator("data_path")
    @classmethod
    def _folder(cls, value: str) -> str:
        if value.startswith("s3://") and not value[len("s3://") :].split("/", 1)[0]:
            raise ValueError("an s3:// data_path needs a bucket: s3://bucket/prefix/")
        return value if value.endswith("/") else value + "/"

    @field_validator("endpoint_url")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://[A-Za-z0-9.\-]+(:\d+)?/?$", value):
            raise ValueError(f"{value!r} is not an endpoint URL like http://host:port")
        return value


def _warehouse_form(value: object) -> str | None:
    if isinstance(value, str):
        return "folder"
    return "team" if isinstance(value, dict | TeamWarehouse) else None


# `warehouse:` is a folder (the embedded lake) or a mapping (the team setup); an error names the
# key inside the mapping, not pydantic's attempts at both forms.
WarehouseSetting = Annotated[
    Annotated[str, Tag("folder")] | Annotated[TeamWarehouse, Tag("team")],
    Discriminator(
        _warehouse_form,
        custom_error_type="warehouse_form",
        custom_error_message="a folder (e.g. .runledger/lake) or a mapping with catalog and data_path",
    ),
]
