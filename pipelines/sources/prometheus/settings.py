"""The settings of a `prometheus` source of GPU utilization."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from pipelines.config_rules import StrictModel
from pipelines.sources.prometheus_range import PrometheusRange

LABEL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class HostLabel(StrictModel):
    """The label of a GPU series that holds its cloud resource id (`instance_id` relabelled from EC2
    service discovery, say)."""

    label: str = "instance_id"

    @field_validator("label")
    @classmethod
    def _label_name(cls, label: str) -> str:
        if not LABEL_NAME.match(label):
            raise ValueError(f"{label!r} is not a Prometheus label name")
        return label


class HostMap(StrictModel):
    """A node map CSV (`hostname,resource_id,start,end`) for the series' `Hostname` label."""

    csv: str = Field(min_length=1)


class PrometheusSource(PrometheusRange):
    """GPU utilization from NVIDIA DCGM exporter series in Prometheus: `DCGM_FI_PROF_GR_ENGINE_ACTIVE`
    (0 to 1) where a GPU has it, else `DCGM_FI_DEV_GPU_UTIL` (percent), one series per GPU.

    Attributes:
        hosts: how a series names its cloud resource: `{label: NAME}` (default `instance_id`; a
            series without it is looked up by its `Hostname` label in the clusters' node maps), or
            `{csv: FILE}` (its `Hostname` label through this node map).
    """

    kind: Literal["prometheus"]
    hosts: HostLabel | HostMap = Field(default_factory=HostLabel)
