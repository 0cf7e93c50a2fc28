"""The demo's file writers: YAML that loads typed, JSON lines, Parquet that depends on its rows only."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml


class _DemoYamlDumper(yaml.SafeDumper):
    """Block style except for lists of scalars; timestamps as `2026-10-03T00:00:00Z` and big
    numbers as `7.0e+9`, so that both load typed."""


def _represent_datetime(dumper: yaml.SafeDumper, moment: datetime) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", f"{moment:%Y-%m-%dT%H:%M:%SZ}")


def _represent_float(dumper: yaml.SafeDumper, number: float) -> yaml.ScalarNode:
    if abs(number) < 1e6:
        return dumper.represent_float(number)
    mantissa, exponent = f"{number:e}".split("e")
    mantissa = mantissa.rstrip("0")
    text = f"{mantissa}0e+{int(exponent)}" if mantissa.endswith(".") else f"{mantissa}e+{int(exponent)}"
    return dumper.represent_scalar("tag:yaml.org,2002:float", text)


def _represent_list(dumper: yaml.SafeDumper, items: list) -> yaml.SequenceNode:
    scalars_only = not any(isinstance(item, dict | list) for item in items)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=scalars_only)


_DemoYamlDumper.add_representer(datetime, _represent_datetime)
_DemoYamlDumper.add_representer(list, _represent_list)
_DemoYamlDumper.add_representer(float, _represent_float)


def write_yaml(path: Path, document: dict, *, header: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.dump(document, Dumper=_DemoYamlDumper, sort_keys=False, default_flow_style=False, width=120)
    path.write_text(header + text)


def write_json_lines(path: Path, documents: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(document) + "\n" for document in documents))


def write_parquet(path: Path, rows: list[dict], schema: pa.Schema) -> None:
    """Snappy-compressed Parquet with statistics; pyarrow writes no creation time into it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, path, compression="snappy", version="2.6", write_statistics=True)
