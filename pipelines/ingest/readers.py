"""The reader of a configured billing source: its kind's reader (`pipelines/sources/<kind>/`),
opened with the configuration's paths and folders."""

from __future__ import annotations

import duckdb

from pipelines.config import RunLedgerConfig
from pipelines.config_rules import ConfigError
from pipelines.sources.base import BillingSourceReader
from pipelines.sources.kind import ReaderPlace, SourceSettings
from pipelines.sources.registry import kind_of


def reader_for(
    source: SourceSettings,
    config: RunLedgerConfig,
    *,
    warehouse: duckdb.DuckDBPyConnection | None = None,
    full_refresh: bool = False,
) -> BillingSourceReader:
    """The reader of a configured billing source.

    Args:
        source: the configured source.
        config: the whole configuration (paths resolve against it).
        warehouse: where incremental sources (BigQuery) find their watermark; None reads them
            as if nothing was loaded yet.
        full_refresh: incremental sources list every billing period, not only those with new rows.

    Raises:
        ConfigError: for a source that is not a billing source.
    """
    kind = kind_of(source)
    if kind.reader is None:
        raise ConfigError(f"sources[{config.sources.index(source)}]: kind {source.kind} is not a billing source")
    place = ReaderPlace(
        resolve=config.resolve,
        staging_dir=config.lake.staging_dir,
        cache_dir=config.lake.cache_dir / source.name,
        dimension_tags={dimension: keys[0] for dimension, keys in config.attribution.dimensions.items()},
        warehouse=warehouse,
        full_refresh=full_refresh,
    )
    return kind.reader(source, place)
