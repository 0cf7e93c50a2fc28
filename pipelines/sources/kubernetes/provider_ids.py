"""A Kubernetes node's provider id (`spec.providerID`, kube_node_info's `provider_id`) as the cloud
resource id its bill lines carry:

- `aws:///us-east-1a/i-0abc123` → `i-0abc123`, the EC2 instance id (CUR `line_item_resource_id`,
  FOCUS ResourceId);
- `gce://my-project/us-central1-a/gke-pool-1-abcd` → `gke-pool-1-abcd`, the instance name: the GCP
  billing export's `resource.name` (FOCUS ResourceName). Its `resource.global_name`
  (`//compute.googleapis.com/projects/<number>/zones/<zone>/instances/<numeric id>`) holds the
  numeric instance id, which the provider id does not carry;
- `azure:///subscriptions/.../virtualMachines/vm-0` → `/subscriptions/.../virtualMachines/vm-0`,
  Azure's resource id;
- anything else (`kind://...`, a bare-metal id) → the provider id as written.
"""

from __future__ import annotations

import re

AWS = re.compile(r"^aws:///?(?:[^/]*/)*(?P<instance>i-[0-9a-f]+)$")
GCE = re.compile(r"^gce://(?P<project>[^/]+)/(?P<zone>[^/]+)/(?P<instance>[^/]+)$")
AZURE = re.compile(r"^azure://(?P<resource>/subscriptions/.+)$", re.IGNORECASE)


def resource_id(provider_id: str) -> str | None:
    """The cloud resource id of a node's provider id (module docstring); None for an empty one
    (a node no cloud provides)."""
    if not provider_id:
        return None
    for pattern, group in ((AWS, "instance"), (GCE, "instance"), (AZURE, "resource")):
        found = pattern.match(provider_id)
        if found:
            return found[group]
    return provider_id
