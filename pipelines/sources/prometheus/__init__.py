"""`prometheus`: GPU utilization from NVIDIA DCGM exporter series in Prometheus; not billing, a
telemetry source.

settings.py (`PrometheusSource`; the range and origin it shares with `kubernetes` sources are
`pipelines/sources/prometheus_range.py`), reader.py (`read_gpu_hours`: the series → GPU-hours). The queries go through
`connectors/prometheus` (a server, or saved responses).
"""

from pipelines.sources.kind import SourceKind, deferred
from pipelines.sources.prometheus.settings import PrometheusSource

KIND = SourceKind(
    name="prometheus",
    settings=PrometheusSource,
    description="GPU utilization from NVIDIA DCGM exporter series in Prometheus, in `run_utilization`",
    telemetry=deferred("pipelines.sources.prometheus.reader", "read_gpu_hours"),
)
