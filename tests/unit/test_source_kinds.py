"""The source kinds (`pipelines/sources/registry.py`): one declaration each, from which the entries
of `sources:`, the billing sources' readers and their drift checks derive."""

from pathlib import Path

import pytest

from pipelines.config import load_config
from pipelines.config_rules import ConfigError
from pipelines.ingest.readers import reader_for
from pipelines.sources import focus_files
from pipelines.sources.aws_cur import cur2
from pipelines.sources.delivery import FormatMapping
from pipelines.sources.gcp_billing import export_rows
from pipelines.sources.registry import KINDS
from tests.support import write_config

MAPPINGS = (cur2.MAPPING, export_rows.MAPPING, focus_files.MAPPING)


def test_each_kind_and_each_source_format_is_declared_once() -> None:
    names = [kind.name for kind in KINDS]
    formats = [source_format for kind in KINDS for source_format in kind.source_formats]
    assert len(set(names)) == len(names)
    assert len(set(formats)) == len(formats)
    assert {kind.name for kind in KINDS if kind.billing} == {"aws_cur", "gcp_billing", "focus", "manual_costs"}


@pytest.mark.parametrize("mapping", MAPPINGS, ids=lambda mapping: mapping.name)
def test_each_format_mapping_has_its_statements(mapping: FormatMapping) -> None:
    for name in ("create", "inputs", "insert", "staged", *mapping.distinct_values):
        assert mapping.statement(name).strip()


def test_a_kind_that_is_not_billing_has_no_reader(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, "sources:\n  - {name: tags, kind: aws_tags, regions: [us-east-1]}\n"))
    assert config.billing_sources == []
    with pytest.raises(ConfigError, match=r"sources\[0\]: kind aws_tags is not a billing source"):
        reader_for(config.sources[0], config)
