"""The settings of an `aws_cur` source."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator

from pipelines.sources.kind import SourceSettings


class AwsCurSource(SourceSettings):
    """AWS billing exports (legacy CUR, CUR 2.0, AWS FOCUS) under an S3 prefix or local folder."""

    kind: Literal["aws_cur"]
    uri: str
    endpoint_url: str | None = None

    @field_validator("uri")
    @classmethod
    def _s3_bucket(cls, uri: str) -> str:
        if uri.startswith("s3://") and not uri[len("s3://") :].split("/", 1)[0]:
            raise ValueError("an s3:// URI needs a bucket: s3://bucket/prefix/report-or-export-name")
        return uri

    @property
    def is_local(self) -> bool:
        return not self.uri.startswith("s3://")

    def local_path(self) -> tuple[str, str] | None:
        return ("uri", self.uri) if self.is_local else None
