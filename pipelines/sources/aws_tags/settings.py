"""The settings of an `aws_tags` source."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pipelines.sources.kind import SourceSettings


class AwsTagsSource(SourceSettings):
    """A Resource Groups Tagging API snapshot."""

    kind: Literal["aws_tags"]
    regions: list[str] = Field(min_length=1)
    endpoint_url: str | None = None
