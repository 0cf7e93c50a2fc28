"""The settings of a `focus` source."""

from __future__ import annotations

from typing import Literal

from pipelines.sources.kind import SourceSettings


class FocusSource(SourceSettings):
    """Any FOCUS 1.0-1.2 export, CSV or Parquet, a file or a folder."""

    kind: Literal["focus"]
    path: str

    def local_path(self) -> tuple[str, str] | None:
        return ("path", self.path) if self.path else None
