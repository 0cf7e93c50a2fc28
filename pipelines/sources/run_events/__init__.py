"""`run_events`: a training-run event log (JSON lines files or MLflow runs), not billing.

settings.py (`RunEventsSource`, `MlflowEvents`). Its reader is the `run_events` asset's
(`pipelines/progress/events.py`), which replaces the source's rows of `run_events`.
"""

from pipelines.sources.kind import SourceKind
from pipelines.sources.run_events.settings import RunEventsSource

KIND = SourceKind(
    name="run_events",
    settings=RunEventsSource,
    description="training-run events (JSON lines or MLflow runs) in `run_events`",
)
