"""The settings of a `run_events` source."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pipelines.config_rules import StrictModel
from pipelines.sources.kind import SourceSettings


class MlflowEvents(StrictModel):
    """MLflow runs read as run events through the MLflow tracking client."""

    tracking_uri: str = Field(min_length=1)
    experiment_names: list[str] = Field(min_length=1)
    training_run_tag: str = "training_run"


class RunEventsSource(SourceSettings):
    """A training-run event log: JSON lines under `path`, or MLflow runs."""

    kind: Literal["run_events"]
    path: str | None = None
    mlflow: MlflowEvents | None = None

    @model_validator(mode="after")
    def _one_origin(self) -> RunEventsSource:
        if (self.path is None) == (self.mlflow is None):
            raise ValueError("give exactly one of `path` (JSON lines file or folder) or `mlflow`")
        return self

    def local_path(self) -> tuple[str, str] | None:
        return ("path", self.path) if self.path else None
