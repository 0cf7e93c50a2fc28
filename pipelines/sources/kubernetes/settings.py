"""The settings of a `kubernetes` source."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from pipelines.sources.prometheus_range import PrometheusRange

RESOURCE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class KubernetesSource(PrometheusRange):
    """A Kubernetes cluster's pods and nodes as kube-state-metrics reports them to Prometheus: a
    server's HTTP API (`url`) or a folder of its saved range query responses (`path`), over the
    range `PrometheusRange` describes."""

    kind: Literal["kubernetes"]
    cluster: str = Field(min_length=1)
    gpu_resource: str = "nvidia_com_gpu"

    @field_validator("gpu_resource")
    @classmethod
    def _resource_name(cls, name: str) -> str:
        if not RESOURCE_NAME.match(name):
            raise ValueError(
                f"{name!r} is not a resource as kube-state-metrics names it (`nvidia.com/gpu` is `nvidia_com_gpu`)"
            )
        return name
