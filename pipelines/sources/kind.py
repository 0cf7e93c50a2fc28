"""What a source kind declares (`SourceKind`), the settings every configured source shares
(`SourceSettings`) and the plain values a billing source's reader is opened with (`ReaderPlace`).

A kind is one folder, `pipelines/sources/<kind>/`, whose `__init__.py` holds its `KIND`, listed
once in `pipelines/sources/registry.py`; the configuration's `sources:`, the reader of a billing
source, its raw load asset and its schema-drift check all follow from that declaration. The
configuration imports every declaration, so a declaration imports only its settings: its reader
and drift (polars, the providers' clients) load when first called.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from pipelines.config_rules import StrictModel

if TYPE_CHECKING:
    import duckdb

    from pipelines.sources.base import BillingSourceReader
    from pipelines.sources.drift import ColumnDrift
    from pipelines.sources.intervals import ClusterIntervals
    from pipelines.sources.telemetry import GpuHour


class SourceSettings(StrictModel):
    """An entry of `sources:`: its name, its kind (which settings model reads the rest) and the
    settings of its kind (a subclass)."""

    name: str
    kind: str

    def local_path(self) -> tuple[str, str] | None:
        """The key and value of the local file or folder the source reads (checked to exist when
        the configuration loads), None when it reads none."""
        return None


def deferred(module: str, name: str) -> Callable[..., Any]:
    """`module.name`, imported at its first call: a declaration is imported with the
    configuration, its reader and drift (polars, the providers' clients) only when a load needs
    them."""

    def call(*args: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args)

    call.__qualname__ = f"{module}.{name}"
    return call


@dataclass(frozen=True)
class ReaderPlace:
    """What a billing source's reader is opened with besides its settings, as plain values.

    Attributes:
        resolve: turns a path of the configuration into a path (relative to its folder).
        staging_dir: where readers write typed copies of a delivery.
        cache_dir: the source's own cache folder (downloaded exports).
        dimension_tags: each attribution dimension with the tag key its values are tagged with.
        warehouse: where incremental sources (BigQuery) find their watermark; None reads them as
            if nothing was loaded yet.
        full_refresh: incremental sources list every billing period, not only those with new rows.
    """

    resolve: Callable[[str], Path]
    staging_dir: Path
    cache_dir: Path
    dimension_tags: Mapping[str, str]
    warehouse: duckdb.DuckDBPyConnection | None = None
    full_refresh: bool = False


@dataclass(frozen=True)
class SourceKind:
    """One kind of source, everything the product needs to know of it.

    Attributes:
        name: the `kind:` of its entries in `sources:`.
        settings: the pydantic model of its entries (its `kind` field the literal `name`).
        description: what it is; for a billing kind, how its rows reach FOCUS (the raw load
            asset's description).
        billing: its rows are billing line items: a raw load asset `raw/<source>` per source,
            loaded into `focus_line_items` through `reader`. A kind that is not billing is read
            by its own step (`aws_tags` by the tag snapshot asset, `run_events` by `run_events`).
        dagster_kinds: the kinds its raw load asset shows in Dagster.
        reader: opens the reader of one configured source (billing kinds).
        source_formats: the `x_SourceFormat` values its readers write (billing kinds).
        drift: the missing and new columns of a delivery in one of its source formats.
        intervals: reads a scheduler source (`slurm`, `kubernetes`): its settings and the
            configuration's path resolver give its usage intervals and nodes
            (`pipelines/sources/intervals.py`), stored by the `cluster_usage` asset.
        telemetry: reads a telemetry source (`prometheus`): its settings and the configuration's
            path resolver give its GPUs' utilization by hour (`pipelines/sources/telemetry.py`),
            stored by the `gpu_utilization` asset.
    """

    name: str
    settings: type[SourceSettings]
    description: str
    billing: bool = False
    dagster_kinds: frozenset[str] = frozenset()
    reader: Callable[[Any, ReaderPlace], BillingSourceReader] | None = None
    source_formats: tuple[str, ...] = ()
    drift: Callable[[str, list[str]], ColumnDrift] | None = None
    intervals: Callable[[Any, Callable[[str], Path]], ClusterIntervals] | None = None
    telemetry: Callable[[Any, Callable[[str], Path]], list[GpuHour]] | None = None

    def __post_init__(self) -> None:
        if get_args(self.settings.model_fields["kind"].annotation) != (self.name,):
            raise ValueError(f"{self.settings.__name__}.kind must be Literal[{self.name!r}]")
        if self.billing and (self.reader is None or self.drift is None or not self.source_formats):
            raise ValueError(f"billing kind {self.name} needs a reader, its source formats and their drift")
