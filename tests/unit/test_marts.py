"""The marts as declared (pipelines.orchestration.marts): each documented in docs/warehouse.md with
every column, its previews reading columns its statements return, its inputs held by its deps; and
the layers of pyproject.toml's import contract, which no layer gets round by naming a table of a
layer above it as a string key."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import tomllib
from pathlib import Path

import dagster as dg
import duckdb
import pytest

import pipelines
from pipelines.definitions import ASSET_MODULES, build_asset_graph
from pipelines.orchestration.marts import Mart, Preview
from pipelines.orchestration.tables import INPUTS_METADATA_KEY, tables_held
from pipelines.warehouse.catalog import warehouse_catalog
from pipelines.warehouse.sql import read_sql

REPO = Path(__file__).resolve().parents[2]
MARTS = {value.name: value for module in ASSET_MODULES for value in vars(module).values() if isinstance(value, Mart)}
PREVIEWS = {
    f"{module.__name__}.{name}.{preview.key}" if isinstance(value, Mart) else f"{module.__name__}.{name}": preview
    for module in ASSET_MODULES
    for name, value in vars(module).items()
    for preview in (value.previews if isinstance(value, Mart) else (value,) if isinstance(value, Preview) else ())
}
# the parameters of the preview statements that take some
PARAMETERS = {"top_offenders": {"billing_periods": [], "limit": 1}}


def test_every_asset_kept_while_its_input_tables_are_unchanged_is_a_declared_mart() -> None:
    kept = {
        spec.key.to_user_string()
        for asset in build_asset_graph(None).assets
        for spec in asset.specs
        if INPUTS_METADATA_KEY in spec.metadata
    }
    assert kept and kept <= set(MARTS)


@pytest.mark.parametrize("name", sorted(MARTS))
def test_every_mart_has_its_section_in_docs_warehouse_md_with_every_column(name: str) -> None:
    docs = (REPO / "docs/warehouse.md").read_text()
    catalog = warehouse_catalog()
    for table in (name, *MARTS[name].also_writes):
        section = docs.split(f"\n## {table}\n", 1)[1].split("\n## ", 1)[0]
        assert f"held by `{name}`" in section, table
        for column in catalog[table].columns:
            assert f"| `{column.name}` |" in section, f"{table}.{column.name}"


@pytest.mark.parametrize("preview", sorted(PREVIEWS))
def test_every_preview_shows_columns_its_statement_returns(preview: str, warehouse: duckdb.DuckDBPyConnection) -> None:
    declared = PREVIEWS[preview]
    result = warehouse.execute(read_sql(*declared.sql), PARAMETERS.get(declared.sql[1], {}))
    returned = {column[0] for column in result.description}
    shown = {column.name for column in declared.columns} | {column.unit for column in declared.columns if column.unit}
    assert shown <= returned, f"{preview} shows {shown - returned}, which its statement does not return"


@pytest.mark.parametrize("name", sorted(MARTS))
def test_every_mart_reads_tables_its_deps_hold(name: str) -> None:
    catalog = warehouse_catalog()
    for read in MARTS[name].reads:
        if isinstance(read.upstream, dg.AssetKey):
            held = [read.upstream.path[-1]]
        else:
            held = tables_held(read.upstream.specs_by_key[read.upstream.key])
        for table in read.tables:
            assert table in held, f"{name} reads {table}, which its dep does not hold"
            # the inputs digest is of files: a view has none
            assert catalog[table].kind == "table" or MARTS[name].digest is not None, f"{name} reads view {table}"


def _layers() -> list[list[str]]:
    """The layers of the data-flow contract, top first: the modules of each."""
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (layers,) = [contract["layers"] for contract in contracts if contract["type"] == "layers"]
    return [[module.strip() for module in layer.split("|")] for layer in layers]


def _layer_of(module: str, layers: list[list[str]]) -> int | None:
    """The layer of a module, counted from the top; None for a module of no layer."""
    for index, layer in enumerate(layers):
        if any(module == top or module.startswith(f"{top}.") for top in layer):
            return index
    return None


def _product_modules() -> dict[str, ast.Module]:
    return {
        info.name: ast.parse(Path(importlib.import_module(info.name).__file__).read_text())
        for info in pkgutil.walk_packages(pipelines.__path__, "pipelines.")
        if not info.name.startswith("pipelines.demo")
    }


def _imported_names(tree: ast.Module) -> set[str]:
    return {
        alias.asname or alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }


def _string_keys(tree: ast.Module) -> set[str]:
    """The asset keys a module names as strings: `AssetKey("x")`, and strings among `deps=[...]`."""
    keys = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if function == "AssetKey" and node.args and isinstance(node.args[0], ast.Constant):
            keys.add(node.args[0].value)
        for keyword in node.keywords:
            if keyword.arg == "deps" and isinstance(keyword.value, ast.List | ast.Tuple):
                keys |= {item.value for item in keyword.value.elts if isinstance(item, ast.Constant)}
    return keys


def test_no_layer_names_a_table_of_a_layer_above_as_a_string_key() -> None:
    """A layer reads what a lower layer wrote through that layer's declarations (its assets or
    marts, imported), never by a key in a string, which the import contract cannot see."""
    layers = _layers()
    modules = _product_modules()
    # each table's layer: that of the module defining its asset (binding it to a name it did not import)
    layer_of_table: dict[str, int] = {}
    for name, tree in modules.items():
        layer = _layer_of(name, layers)
        imported = _imported_names(tree)
        for bound, value in vars(importlib.import_module(name)).items():
            if isinstance(value, dg.AssetsDefinition) and bound not in imported and layer is not None:
                layer_of_table |= {table: layer for spec in value.specs for table in tables_held(spec)}
    assert {"run_progress", "run_events", "waste", "budget_variance"} <= set(layer_of_table)
    found = []
    for name, tree in modules.items():
        layer = _layer_of(name, layers)
        if layer is None:
            continue
        for key in _string_keys(tree):
            if key in layer_of_table and layer_of_table[key] < layer:
                found.append(f"{name} names {key!r}, written by {'|'.join(layers[layer_of_table[key]])}")
    assert not found


def test_the_layers_put_progress_below_budgets_and_waste() -> None:
    order = [module for layer in _layers() for module in layer]
    assert order.index("pipelines.budgets") < order.index("pipelines.waste") < order.index("pipelines.progress")
    assert order.index("pipelines.progress") < order.index("pipelines.attribution")
    assert not re.search(r"AssetKey\(\"run_(progress|events)\"\)", (REPO / "pipelines/budgets/assets.py").read_text())
