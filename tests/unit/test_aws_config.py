"""AWS source configuration: mistakes are configuration errors naming the key."""

from pathlib import Path

import pytest

from pipelines.config import load_config
from pipelines.config_rules import ConfigError
from pipelines.ingest.readers import reader_for
from pipelines.sources.aws_cur.reader import AwsExportReader
from tests.support import write_config


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "sources:\n  - {name: a, kind: aws_cur, uri: 's3:///cur/r'}\n",
            "sources[0].uri: Value error, an s3:// URI needs a bucket",
        ),
        (
            "sources:\n  - {name: t, kind: aws_tags, regions: []}\n",
            "sources[0].regions: List should have at least 1 item",
        ),
    ],
)
def test_aws_source_mistakes_name_the_key(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected.replace("[", r"\[").replace("]", r"\]")):
        load_config(write_config(tmp_path, text))


def test_an_s3_source_needs_no_network_until_it_is_read(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, "sources:\n  - {name: a, kind: aws_cur, uri: 's3://bucket/cur/r'}\n"))
    reader = reader_for(config.sources[0], config)
    assert isinstance(reader, AwsExportReader) and reader.client.store.describe("x") == "s3://bucket/cur/r/x"
    assert reader.client.store._client is None
