"""`kubernetes`: a Kubernetes cluster's pods on its nodes, from kube-state-metrics in Prometheus;
not billing, a scheduler source.

settings.py (`KubernetesSource`), reader.py (`read_intervals`: the series → usage intervals and
nodes), provider_ids.py (a node's provider id → the cloud resource id of its bill lines). The
queries go through `connectors/prometheus` (a server, or saved responses).
"""

from pipelines.sources.kind import SourceKind, deferred
from pipelines.sources.kubernetes.settings import KubernetesSource

KIND = SourceKind(
    name="kubernetes",
    settings=KubernetesSource,
    description="a Kubernetes cluster's pods on its nodes (kube-state-metrics in Prometheus), in `cluster_usage`",
    intervals=deferred("pipelines.sources.kubernetes.reader", "read_intervals"),
)
