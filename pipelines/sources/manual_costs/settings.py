"""The settings of a `manual_costs` source."""

from __future__ import annotations

from typing import Literal

from pipelines.sources.kind import SourceSettings


class ManualCostsSource(SourceSettings):
    """Costs no cloud bills (labour, data labelling, tooling, ...): CSV or YAML files, a file or a folder."""

    kind: Literal["manual_costs"]
    path: str

    def local_path(self) -> tuple[str, str] | None:
        return ("path", self.path) if self.path else None
