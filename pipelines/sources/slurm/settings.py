"""The settings of a `slurm` source."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, field_validator

from pipelines.config_rules import StrictModel
from pipelines.sources.kind import SourceSettings

RunField = Literal["comment", "job_name", "wckey", "account"]
"""A job record's field that names its training run."""


class RunPattern(StrictModel):
    """A regular expression searched in one field of the job; its named groups become labels
    (`(?P<training_run>[^/]+)/(?P<experiment>.+)` on the job name `llm-7b/lr-sweep`)."""

    regex: str = Field(min_length=1)
    field: RunField

    @field_validator("regex")
    @classmethod
    def _named_groups(cls, regex: str) -> str:
        try:
            compiled = re.compile(regex)
        except re.error as error:
            raise ValueError(f"not a regular expression: {error}") from None
        if not compiled.groupindex:
            raise ValueError("needs at least one named group, e.g. (?P<training_run>...)")
        return regex


class NodeTag(StrictModel):
    """Nodes found by a resource tag whose value is the node's host name."""

    tag: str = Field(min_length=1)


class SlurmSource(SourceSettings):
    """A Slurm cluster read from `sacct --json` output files.

    Attributes:
        path: a `sacct --json` output file, or a folder of them (`*.json`).
        cluster: the cluster's name in RunLedger.
        run_from: where a job names its training run: `comment` (its `key=value` pairs),
            `job_name`, `wckey` or `account` (the whole value is the run), or a `RunPattern`.
        nodes: the node map, a CSV file (`hostname,resource_id,start,end`), or `{tag: KEY}`.
    """

    kind: Literal["slurm"]
    path: str = Field(min_length=1)
    cluster: str = Field(min_length=1)
    run_from: RunField | RunPattern = "comment"
    nodes: Annotated[str, Field(min_length=1)] | NodeTag

    def local_path(self) -> tuple[str, str] | None:
        return ("path", self.path)
