"""The warehouse tables an asset holds: declared on the asset, documented from the schema's
`comment on` statements (pipelines.warehouse.catalog) when the definitions are built."""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from pipelines.warehouse.catalog import warehouse_catalog

TABLES_METADATA_KEY = "runledger/tables"
INPUTS_METADATA_KEY = "runledger/inputs"


def holds_tables(*tables: str, inputs: Sequence[str] = ()) -> dict[str, dg.MetadataValue]:
    """Asset metadata naming the warehouse tables and views the asset writes, the one it is first,
    and, for an asset that keeps its build while they are unchanged (`step_inputs.tables_inputs`),
    the tables it reads."""
    metadata = {TABLES_METADATA_KEY: dg.MetadataValue.json(list(tables))}
    if inputs:
        metadata[INPUTS_METADATA_KEY] = dg.MetadataValue.json(list(inputs))
    return metadata


def tables_held(spec: dg.AssetSpec) -> list[str]:
    """The tables and views an asset declares with `holds_tables` (none for, e.g., report files)."""
    declared = spec.metadata.get(TABLES_METADATA_KEY)
    return list(declared.value) if declared is not None else []


def table_schema(table: str) -> dg.TableSchema:
    """The columns of a warehouse table or view: name, DuckDB type, NULL allowed and description."""
    return dg.TableSchema(
        columns=[
            dg.TableColumn(
                name=column.name,
                type=column.data_type,
                description=column.description,
                constraints=dg.TableColumnConstraints(nullable=column.nullable),
            )
            for column in warehouse_catalog()[table].columns
        ]
    )


def with_table_schemas(assets: Sequence[dg.AssetsDefinition]) -> list[dg.AssetsDefinition]:
    """The assets with `dagster/table_name` and `dagster/column_schema` of the first table each
    holds, as the UI shows them under Columns."""

    def documented(spec: dg.AssetSpec) -> dg.AssetSpec:
        tables = tables_held(spec)
        if not tables:
            return spec
        return spec.merge_attributes(
            metadata={"dagster/table_name": tables[0], "dagster/column_schema": table_schema(tables[0])}
        )

    return [asset.map_asset_specs(documented) for asset in assets]
