"""The waste analysis's settings (`waste:` in runledger.yaml)."""

from __future__ import annotations

from pydantic import Field

from pipelines.config_rules import StrictModel

DEFAULT_CHECKPOINT_RESOURCES = ("*ckpt*", "*checkpoint*")
# AWS: "… US East (Northern Virginia) data transfer to US West (Oregon)";
# GCP: "Network Inter Region Data Transfer Out from Americas to EMEA".
DEFAULT_INTER_REGION_TRANSFER = ("*inter region*", "*inter-region*", "*interregion*", "*data transfer to *")


class Waste(StrictModel):
    """How the waste analysis recognizes checkpoint storage and inter-region transfer (`waste:`).

    Both are case-insensitive globs: `checkpoint_resources` on the ResourceId of storage lines,
    `inter_region_transfer` on the ChargeDescription of network lines.
    """

    checkpoint_resources: list[str] = Field(default_factory=lambda: list(DEFAULT_CHECKPOINT_RESOURCES))
    inter_region_transfer: list[str] = Field(default_factory=lambda: list(DEFAULT_INTER_REGION_TRANSFER))
