"""Which apiVersions the API server serves for the kinds ``validate`` checks, and the refusal
of any other before a single field is looked at (what kubectl and the API server say: the
object never reaches validation).

From Kubernetes 1.34 to 1.37 the DRA kinds are served as resource.k8s.io/v1, and as the
older v1beta2 and v1beta1, which the API server converts (see :mod:`kubectl_dra.convert`);
resource.k8s.io/v1alpha3 serves only DeviceTaintRule there, so a ResourceClaim of that
version is "not served", not a v1 object with field errors. Pods are core v1; PodGroups
scheduling.k8s.io v1beta1 (and v1alpha3, the spec's earlier version).
"""

from __future__ import annotations

import re
from typing import Any

from ..convert import CONVERTIBLE, V1
from .field import FieldError, Path, invalid, required

#: kind -> the apiVersions served for it (first: the one to write)
SERVED: dict[str, tuple[str, ...]] = {
    **{kind: (V1, *reversed(CONVERTIBLE)) for kind in ("ResourceClaim", "ResourceClaimTemplate", "ResourceSlice",
                                                       "DeviceClass")},
    "Pod": ("v1",),
    "PodGroup": ("scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3"),
}

#: a group/version (or a core version alone) as the API machinery parses it
_GROUP_VERSION = re.compile(r"^(?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[a-z0-9]+\Z")

_PATH = Path.root("apiVersion")


def api_version_errors(obj: dict[str, Any]) -> list[FieldError]:
    """Why the API server refuses ``obj`` for its apiVersion ([] when it serves it, or when
    the kind is not one :data:`SERVED` knows: those are not checked)."""
    kind = obj.get("kind")
    served = SERVED.get(kind) if isinstance(kind, str) else None
    if served is None:
        return []
    version = obj.get("apiVersion")
    if version is None or version == "":
        return [required(_PATH, f"the object has no apiVersion; {kind} is served as {_versions(served)}")]
    if not isinstance(version, str):
        return [invalid(_PATH, version, f"must be a string such as {served[0]!r}")]
    if version in served:
        return []
    if version.count("/") > 1 or not _GROUP_VERSION.match(version):
        return [invalid(_PATH, version, f"unexpected GroupVersion string: {version}")]
    return [invalid(_PATH, version, f'not served: no matches for kind "{kind}" in version "{version}" '
                                    f"(served: {_versions(served)})")]


def _versions(served: tuple[str, ...]) -> str:
    return ", ".join(served)
