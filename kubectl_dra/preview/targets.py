"""Resolve preview targets (``claim/NAME``, ``template/NAME``, ``pod/NAME``,
``podgroup/NAME``, bare claim names and objects from ``-f`` files) into the list of
ResourceClaims that are allocated together, the way kube-scheduler gathers a pod's claims.

A pod contributes, in order: its ``spec.resourceClaims`` (a claim by name, a claim
generated from a template, or the claim of its PodGroup when the pod's entry equals the
group's entry in name, resourceClaimName and resourceClaimTemplateName), then the implicit
claim for extended resources backed by DRA (a container resource whose name is a
DeviceClass's ``spec.extendedResourceName`` or ``deviceclass.resource.kubernetes.io/<class>``).
Claims that are already allocated are kept as they are: they are not allocated again, and
their node selector limits the nodes the preview considers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable

from ..types import Obj
from ..convert import to_v1
from ..errors import DraError, InputError, NotFoundError, UsageError, ValidationFailed
from ..gates import FeatureGates, Gate, effective_gates
from ..model.jsoncopy import copy_json
from ..state import ClusterState
from ..state.snapshot import KIND_ALIASES, object_key
from .nodes import node_name, pod_fits_node, pod_ref, selector_matches


#: kinds that can be previewed
PREVIEWABLE = ("ResourceClaim", "ResourceClaimTemplate", "Pod", "PodGroup")

#: resource name prefix that requests any DeviceClass as an extended resource
DEVICECLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
#: annotations set by the controllers on generated claims
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
#: suffix of the names of claims the preview generates (templates, extended resources)
GENERATED_SUFFIX = "preview"


# --------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class Target:
    """One parsed command-line target."""

    kind: str
    name: str
    namespace: str
    #: the text the user typed, for messages
    text: str = ""

    def __str__(self) -> str:
        short = {"ResourceClaim": "claim", "ResourceClaimTemplate": "template", "Pod": "pod", "PodGroup": "podgroup"}
        return f"{short.get(self.kind, self.kind)}/{self.namespace}/{self.name}"


def parse_target(text: str, namespace: str) -> Target:
    """``claim/NAME``, ``claim/NS/NAME``, ``template/NAME``, ``pod/NAME``, ``podgroup/NAME``,
    ``NAME`` (a claim) or ``NS/NAME`` (a claim in namespace NS)."""
    parts = text.split("/")
    if any(not p for p in parts) or len(parts) > 3:
        raise UsageError(f"invalid target {text!r}: use KIND/NAME, KIND/NAMESPACE/NAME or a claim NAME")
    kind = "ResourceClaim"
    if len(parts) >= 2 and parts[0].lower() in KIND_ALIASES:
        kind = KIND_ALIASES[parts[0].lower()]
        parts = parts[1:]
    elif len(parts) == 3:
        raise UsageError(f"invalid target {text!r}: unknown kind {parts[0]!r} "
                         "(use claim, template, pod or podgroup)")
    if kind not in PREVIEWABLE:
        raise UsageError(f"invalid target {text!r}: a {kind} cannot be previewed "
                         "(use claim, template, pod or podgroup)")
    if len(parts) == 2:
        namespace, name = parts
    else:
        (name,) = parts
    return Target(kind=kind, name=name, namespace=namespace, text=text)


# --------------------------------------------------------------------------- claims


@dataclass
class PreviewClaim:
    """One claim of the preview: found in the state, read from a file, or generated."""

    claim: Obj
    #: where it comes from, for people: "claim", "template/NAME", "pod/NS/NAME", ...
    origin: str
    #: True when the preview made it up (from a template or for extended resources)
    generated: bool = False

    @property
    def namespace(self) -> str:
        return object_key(self.claim)[0] or "default"

    @property
    def name(self) -> str:
        return object_key(self.claim)[1]

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    #: ``status.allocation`` of a claim that is already allocated, else None (read once: a
    #: preview asks for every node)
    allocation: Obj | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        alloc = (self.claim.get("status") or {}).get("allocation")
        self.allocation = alloc if isinstance(alloc, dict) else None


@dataclass
class ExtendedResources:
    """A pod's extended resources that may be backed by DRA; the claim depends on the node
    (resources the node offers through a device plugin are not allocated with DRA)."""

    pod: Obj
    #: resource name -> DeviceClass name
    classes: dict[str, str]

    @property
    def claim_name(self) -> str:
        return f"{(self.pod.get('metadata') or {}).get('name')}-extended-resources-{GENERATED_SUFFIX}"

    def claim_for(self, node: Obj) -> PreviewClaim | None:
        """The implicit claim for ``node``, or None when no resource needs DRA there."""
        allocatable = ((node.get("status") or {}).get("allocatable")) or {}
        needed = {r: c for r, c in self.classes.items() if _quantity_int(allocatable.get(r, 0)) == 0}
        requests = extended_requests(self.pod, needed)
        if not requests:
            return None
        meta = self.pod.get("metadata") or {}
        claim = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "name": self.claim_name,
                "namespace": meta.get("namespace") or "default",
                "annotations": {EXTENDED_CLAIM_ANNOTATION: "true"},
            },
            "spec": {"devices": {"requests": requests}},
        }
        return PreviewClaim(claim, origin=f"pod/{pod_ref(self.pod)} extended resources", generated=True)


@dataclass
class PreviewPlan:
    """What to allocate together: fixed claims, per-node implicit claims, and the pods
    whose placement rules limit the nodes."""

    claims: list[PreviewClaim] = field(default_factory=list)
    extended: list[ExtendedResources] = field(default_factory=list)
    pods: list[Obj] = field(default_factory=list)

    def add(self, claim: PreviewClaim) -> None:
        """Append a claim unless the same namespace/name is already part of the plan."""
        if all(c.key != claim.key for c in self.claims):
            self.claims.append(claim)

    def claim_refs(self) -> list[dict[str, str]]:
        """``{"namespace", "name"}`` of every claim, implicit claims included."""
        refs = [{"namespace": c.namespace, "name": c.name} for c in self.claims]
        for ext in self.extended:
            ns = (ext.pod.get("metadata") or {}).get("namespace") or "default"
            refs.append({"namespace": ns, "name": ext.claim_name})
        return refs

    def claims_for(self, node: Obj) -> list[PreviewClaim]:
        """Every claim to allocate together on ``node``, in order."""
        claims = list(self.claims)
        for ext in self.extended:
            implicit = ext.claim_for(node)
            if implicit is not None:
                claims.append(implicit)
        return claims

    def blockers(self, node: Obj) -> list[str]:
        """Why ``node`` is out of the question before any device is looked at (empty: it is
        not): the node-only filters of the plan's pods (node name, cordon, taints, node
        affinity; the full chain is :class:`~kubectl_dra.preview.pods.PlanPods`'), then
        claims allocated with devices the node cannot reach."""
        reasons: list[str] = []
        for pod in self.pods:
            reason = pod_fits_node(pod, node)
            if reason and reason not in reasons:
                reasons.append(reason)
        return reasons + self.claim_blockers(node)

    def claim_blockers(self, node: Obj) -> list[str]:
        """Claims of the plan already allocated with devices ``node`` cannot reach (DynamicResources refuses it)."""
        reasons: list[str] = []
        for claim in self.claims:
            alloc = claim.allocation
            if alloc is not None and not selector_matches(node, alloc.get("nodeSelector")):
                reasons.append(f"claim {claim.namespace}/{claim.name} is already allocated "
                               f"with devices that node {node_name(node)} cannot reach")
        return reasons

    def to_allocate(self, node: Obj) -> list[PreviewClaim]:
        """The claims of ``node`` that still need an allocation."""
        return [c for c in self.claims_for(node) if c.allocation is None]


# --------------------------------------------------------------------------- resolution


def generated_claim(template: Obj, name: str, namespace: str, annotations: dict[str, str] | None = None) -> Obj:
    """A ResourceClaim as the controller would create it from a ResourceClaimTemplate."""
    spec = template.get("spec") or {}
    tmeta = spec.get("metadata") or {}
    meta: Obj = {"name": name, "namespace": namespace}
    if tmeta.get("labels"):
        meta["labels"] = dict(tmeta["labels"])
    merged = {**(tmeta.get("annotations") or {}), **(annotations or {})}
    if merged:
        meta["annotations"] = merged
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": copy_json(spec.get("spec") or {}),
    }


def _generated_name(*parts: str) -> str:
    """``<parts>-preview``, shortened to a valid object name (253 characters)."""
    name = "-".join([*parts, GENERATED_SUFFIX])
    return name[:253]


class Resolver:
    """Turns targets and file objects into a :class:`PreviewPlan` against one state."""

    def __init__(self, state: ClusterState, namespace: str, gates: FeatureGates | None = None,
                 support: Iterable[Obj] = ()) -> None:
        self.state = state
        self.namespace = namespace
        self.gates = effective_gates(gates)
        self.plan = PreviewPlan()
        #: objects from files that pods in those files refer to: looked up before the state
        self.support = ClusterState()
        self.support.extend(support)

    def find(self, kind: str, name: str, namespace: str) -> Obj | None:
        """An object from the files' support objects, else from the state."""
        found = self.support.find(kind, name, namespace)
        return found if found is not None else self.state.find(kind, name, namespace)

    def get(self, kind: str, name: str, namespace: str) -> Obj:
        """Like :meth:`find`, raising :class:`NotFoundError` naming what is missing."""
        found = self.find(kind, name, namespace)
        return found if found is not None else self.state.get(kind, name, namespace)

    # -- named targets

    def add_target(self, target: Target) -> None:
        handlers: dict[str, Callable[[Target], None]] = {
            "ResourceClaim": self._add_claim_target,
            "ResourceClaimTemplate": self._add_template_target,
            "Pod": lambda t: self.add_pod(self.get("Pod", t.name, t.namespace)),
            "PodGroup": lambda t: self.add_pod_group(self.get("PodGroup", t.name, t.namespace)),
        }
        handlers[target.kind](target)

    def _add_claim_target(self, target: Target) -> None:
        try:
            claim = self.get("ResourceClaim", target.name, target.namespace)
        except NotFoundError as exc:
            first = target.text.split("/")[0] if target.text.count("/") == 1 else ""
            if first and first.lower() not in KIND_ALIASES:
                # `foo/bar` reads as claim bar in namespace foo; say so, since a mistyped kind looks alike.
                raise NotFoundError(f"{exc} (read {target.text!r} as NAMESPACE/NAME; a kind is one of "
                                    "claim/, template/, pod/, podgroup/)") from None
            raise
        self.plan.add(PreviewClaim(claim, origin="claim"))

    def _add_template_target(self, target: Target) -> None:
        template = self.get("ResourceClaimTemplate", target.name, target.namespace)
        self.add_template(template)

    # -- objects (from files or the state)

    def add_object(self, obj: Obj, origin: str) -> None:
        """A claim, template, pod or PodGroup read from a ``-f`` file."""
        kind = obj.get("kind")
        obj = copy_json(obj)
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict) or not meta.get("name"):
            raise InputError(f"{origin}: {kind} has no metadata.name")
        meta.setdefault("namespace", self.namespace)
        if kind == "ResourceClaim":
            obj.pop("status", None)  # a claim from a file is previewed as a new claim
            self.plan.add(PreviewClaim(obj, origin=origin))
        elif kind == "ResourceClaimTemplate":
            self.add_template(obj)
        elif kind == "Pod":
            self.add_pod(obj)
        elif kind == "PodGroup":
            self.add_pod_group(obj)
        else:
            raise InputError(f"{origin}: {kind} {meta.get('name')!r} cannot be previewed "
                             "(files may hold ResourceClaims, ResourceClaimTemplates, Pods and PodGroups; "
                             "give other objects with --state)")

    def add_template(self, template: Obj) -> None:
        ns, name = object_key(template)
        ns = ns or self.namespace
        claim = generated_claim(template, _generated_name(name), ns)
        self.plan.add(PreviewClaim(claim, origin=f"template/{name}", generated=True))

    def add_pod_group(self, group: Obj) -> None:
        """All claims of a PodGroup's ``spec.resourceClaims`` (a field of DRAWorkloadResourceClaims)."""
        entries = (group.get("spec") or {}).get("resourceClaims") or []
        if entries and not self.gates.enabled(Gate.WORKLOAD_RESOURCE_CLAIMS):
            raise UsageError(f"PodGroup {'/'.join(object_key(group))}: spec.resourceClaims needs the feature gate "
                             "DRAWorkloadResourceClaims, which is disabled; the API server drops the field and the "
                             "scheduler allocates none of these claims")
        if not entries:
            raise UsageError(f"PodGroup {'/'.join(object_key(group))} has no spec.resourceClaims to preview")
        for entry in entries:
            self.plan.add(self._group_claim(group, entry))

    def add_pod(self, pod: Obj) -> None:
        """A pod's claims (own, templated, PodGroup-shared) and its implicit extended-resource claim."""
        ns = (pod.get("metadata") or {}).get("namespace") or self.namespace
        pod.setdefault("metadata", {}).setdefault("namespace", ns)
        spec = pod.get("spec") or {}
        group = self._pod_group(pod)
        group_entries = ((group or {}).get("spec") or {}).get("resourceClaims") or []
        statuses = {s.get("name"): s.get("resourceClaimName")
                    for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
        for entry in spec.get("resourceClaims") or []:
            shared = next((g for g in group_entries if _same_pod_claim(g, entry)), None)
            if group is not None and shared is not None:
                self.plan.add(self._group_claim(group, shared))
            else:
                self.plan.add(self._pod_claim(pod, entry, statuses.get(entry.get("name"))))
        self._add_extended(pod)
        self.plan.pods.append(pod)

    # -- helpers

    def _pod_group(self, pod: Obj) -> Obj | None:
        """The PodGroup a pod belongs to (``spec.schedulingGroup.podGroupName``), when claims are shared."""
        group_name = (((pod.get("spec") or {}).get("schedulingGroup")) or {}).get("podGroupName")
        if not group_name or not self.gates.enabled(Gate.WORKLOAD_RESOURCE_CLAIMS):
            return None
        ns = pod["metadata"]["namespace"]
        group = self.find("PodGroup", group_name, ns)
        if group is None:
            raise NotFoundError(f"PodGroup {group_name!r} of pod {ns}/{pod['metadata'].get('name')} "
                                f"not found in namespace {ns!r}")
        return group

    def _pod_claim(self, pod: Obj, entry: Obj, status_name: str | None) -> PreviewClaim:
        ns = pod["metadata"]["namespace"]
        pod_name = pod["metadata"].get("name") or ""
        origin = f"pod/{ns}/{pod_name}"
        if entry.get("resourceClaimName"):
            claim = self.get("ResourceClaim", entry["resourceClaimName"], ns)
            return PreviewClaim(claim, origin=origin)
        template_name = entry.get("resourceClaimTemplateName")
        if not template_name:
            raise InputError(f"pod {ns}/{pod_name}: spec.resourceClaims entry {entry.get('name')!r} "
                             "has neither resourceClaimName nor resourceClaimTemplateName")
        if status_name:
            existing = self.find("ResourceClaim", status_name, ns)
            if existing is not None:
                return PreviewClaim(existing, origin=origin)
        template = self.get("ResourceClaimTemplate", template_name, ns)
        claim = generated_claim(template, _generated_name(pod_name, str(entry.get("name"))), ns,
                                {POD_CLAIM_NAME_ANNOTATION: str(entry.get("name"))})
        return PreviewClaim(claim, origin=f"{origin} template/{template_name}", generated=True)

    def _group_claim(self, group: Obj, entry: Obj) -> PreviewClaim:
        ns, group_name = object_key(group)
        ns = ns or self.namespace
        origin = f"podgroup/{ns}/{group_name}"
        if entry.get("resourceClaimName"):
            return PreviewClaim(self.get("ResourceClaim", entry["resourceClaimName"], ns), origin=origin)
        template_name = entry.get("resourceClaimTemplateName")
        if not template_name:
            raise InputError(f"PodGroup {ns}/{group_name}: spec.resourceClaims entry {entry.get('name')!r} "
                             "has neither resourceClaimName nor resourceClaimTemplateName")
        statuses = {s.get("name"): s.get("resourceClaimName")
                    for s in (group.get("status") or {}).get("resourceClaimStatuses") or []}
        existing_name = statuses.get(entry.get("name"))
        if existing_name:
            existing = self.find("ResourceClaim", existing_name, ns)
            if existing is not None:
                return PreviewClaim(existing, origin=origin)
        template = self.get("ResourceClaimTemplate", template_name, ns)
        claim = generated_claim(template, _generated_name(group_name, str(entry.get("name"))), ns)
        return PreviewClaim(claim, origin=f"{origin} template/{template_name}", generated=True)

    def _add_extended(self, pod: Obj) -> None:
        """The implicit claim for extended resources backed by DRA (gate DRAExtendedResource)."""
        if not self.gates.enabled(Gate.EXTENDED_RESOURCE):
            return
        ns = pod["metadata"]["namespace"]
        status_name = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        if status_name:
            existing = self.find("ResourceClaim", status_name, ns)
            if existing is not None:
                self.plan.add(PreviewClaim(existing, origin=f"pod/{pod_ref(pod)} extended resources"))
                return
        classes = extended_resource_classes(self.state.device_classes)
        used: dict[str, str] = {}
        for container in _containers(pod):
            for resource in _container_requests(container):
                cls = class_for_resource(resource, classes, self.state)
                if cls is not None:
                    used[resource] = cls
        if used:
            self.plan.extended.append(ExtendedResources(pod, used))


def _same_pod_claim(group_entry: Obj, pod_entry: Obj) -> bool:
    """The scheduler's rule: a pod claim is the group's claim when all three fields are equal."""
    return all(group_entry.get(k) == pod_entry.get(k)
               for k in ("name", "resourceClaimName", "resourceClaimTemplateName"))


def extended_resource_classes(classes: Iterable[Obj]) -> dict[str, str]:
    """``spec.extendedResourceName`` -> DeviceClass name; with several classes for one name, the
    newest (creationTimestamp, then name) wins, as the scheduler's class cache decides."""
    best: dict[str, tuple[str, str]] = {}
    for cls in classes:
        resource = (cls.get("spec") or {}).get("extendedResourceName")
        meta = cls.get("metadata") or {}
        if not resource or not meta.get("name"):
            continue
        rank = (str(meta.get("creationTimestamp") or ""), str(meta["name"]))
        if resource not in best or rank > best[resource]:
            best[resource] = rank
    return {resource: rank[1] for resource, rank in best.items()}


def class_for_resource(resource: str, by_extended_name: dict[str, str], state: ClusterState) -> str | None:
    """The DeviceClass backing a container resource, or None when it is not DRA-backed."""
    if resource in by_extended_name:
        return by_extended_name[resource]
    if resource.startswith(DEVICECLASS_PREFIX):
        name = resource[len(DEVICECLASS_PREFIX):]
        if state.find("DeviceClass", name) is not None:
            return name
    return None


def _containers(pod: Obj) -> list[Obj]:
    spec = pod.get("spec") or {}
    return list(spec.get("initContainers") or []) + list(spec.get("containers") or [])


def _container_requests(container: Obj) -> dict[str, Any]:
    """A container's resource requests (limits stand in for missing requests, as defaulting does)."""
    resources = container.get("resources") or {}
    merged = dict(resources.get("limits") or {})
    merged.update(resources.get("requests") or {})
    return merged


def _quantity_int(value: Any) -> int:
    """An integer quantity (extended resources are whole numbers); 0 when absent or unreadable."""
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return int(value)
    text = str(value).strip()
    from ..quantity import Quantity

    try:
        quantity = Quantity.parse(text)
    except DraError:
        raise InputError(f"extended resource quantity {text!r} is not a valid quantity") from None
    if not quantity.is_integer():
        raise InputError(f"extended resource quantity {text!r} is not a whole number")
    return quantity.int_value()


def extended_requests(pod: Obj, classes: dict[str, str]) -> list[Obj]:
    """The device requests of the implicit extended-resource claim, as the scheduler builds them:
    one ``container-<i>-request-<j>`` per long-lived container and resource (i indexes init
    containers then containers, j the resource among the container's sorted requests); plain
    init containers reuse later long-lived requests and add only the largest shortfall."""
    containers = _containers(pod)
    n_init = len((pod.get("spec") or {}).get("initContainers") or [])
    long_lived = [i for i, c in enumerate(containers)
                  if i >= n_init or c.get("restartPolicy") == "Always"]
    short_lived = [i for i in range(n_init) if i not in long_lived]
    requests: list[Obj] = []
    for resource in sorted(classes):
        cls = classes[resource]
        long_reqs: list[Obj | None] = [None] * len(containers)
        for i in long_lived:
            long_reqs[i] = _container_request(i, containers[i], resource, cls, [])
        biggest: Obj | None = None
        for i in short_lived:
            req = _container_request(i, containers[i], resource, cls, long_reqs[i:])
            if req is not None and (biggest is None or biggest["exactly"]["count"] < req["exactly"]["count"]):
                biggest = req
        if biggest is not None:
            requests.append(biggest)
        requests.extend(r for r in long_reqs if r is not None)
    requests.sort(key=lambda r: r["name"])
    return requests


def _container_request(index: int, container: Obj, resource: str, cls: str,
                       reusable: list[Obj | None]) -> Obj | None:
    """One container's request for ``resource``, minus what ``reusable`` requests already cover."""
    wanted_map = _container_requests(container)
    if resource not in wanted_map:
        return None
    wanted = _quantity_int(wanted_map[resource])
    if wanted <= 0:
        return None
    covered = 0
    for other in reusable:
        if other is not None:
            covered += other["exactly"]["count"]
            if covered >= wanted:
                return None
    position = sorted(wanted_map).index(resource)
    return {
        "name": f"container-{index}-request-{position}",
        "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount", "count": wanted - covered},
    }


def _with_namespace(obj: Obj, namespace: str, origin: str = "", explicit: bool = False) -> Obj:
    """A copy of a file object with ``metadata.namespace`` defaulted; with ``explicit`` (``-n``
    given) another namespace is an error, as kubectl reports it."""
    obj = copy_json(obj)
    meta = obj.setdefault("metadata", {})
    if isinstance(meta, dict) and explicit and meta.get("namespace") and meta["namespace"] != namespace:
        raise UsageError(f"{origin}: the namespace from the provided object {meta['namespace']!r} does not match "
                         f"the namespace {namespace!r}; pass --namespace={meta['namespace']} or leave -n out")
    if isinstance(meta, dict) and not meta.get("namespace"):
        meta["namespace"] = namespace
    return obj


#: kinds a ``-f`` file may hold for a preview: admitted as a create before they are previewed
ADMITTED_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "Pod", "PodGroup")


def admit_file_objects(pairs: list[tuple[Obj, str]], state: ClusterState, gates: FeatureGates | None,
                       warn: Callable[[str], None] | None = None) -> list[tuple[Obj, str]]:
    """File objects as the API server would store them on create (older resource.k8s.io
    versions converted to v1, defaults set, fields of disabled gates dropped), through the
    same admission as ``validate`` and the webhook.

    Raises :class:`ValidationFailed` (exit 1) naming every field error of every object the
    API server would reject, instead of previewing what could never exist. Admin access is
    authorized from the namespace's labels when the state holds the Namespace; otherwise it
    cannot be decided offline and is let through, with a ``warn``-ing.
    """
    if not pairs:
        return pairs
    gates = effective_gates(gates)
    from ..validation.admission import ADMIN_ACCESS_LABEL, review  # (a preview of stored objects never needs it)

    known = {object_key(ns)[1] for ns in state.namespaces}

    def labels(namespace: str) -> dict[str, str]:
        if namespace in known:
            return dict(state.namespace_labels(namespace))
        if warn is not None:
            warn(f"namespace {namespace!r} is not in the cluster state: admin access of the objects from "
                 "files is not checked against its labels")
        return {ADMIN_ACCESS_LABEL: "true"}

    admitted: list[tuple[Obj, str]] = []
    problems: list[str] = []
    for obj, origin in pairs:
        obj = to_v1(obj)
        if obj.get("kind") not in ADMITTED_KINDS:
            admitted.append((obj, origin))
            continue
        decision = review(obj, operation="CREATE", gates=gates, namespace_labels=labels)
        if not decision.allowed:
            ref = f"{decision.kind} {decision.namespace}/{decision.name}" if decision.namespace else \
                f"{decision.kind} {decision.name}"
            problems.extend(f"{origin}: {ref}: {_one_line(str(e))}" for e in decision.errors)
            continue
        admitted.append((decision.object, origin))
    if problems:
        raise ValidationFailed("the API server would reject these objects on create (kubectl dra validate -f "
                               "shows the full decision):\n  " + "\n  ".join(problems))
    return admitted


def _one_line(text: str) -> str:
    """A field error on one line (a CEL error's source excerpt and caret lines dropped)."""
    return "; ".join(line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("|"))


def _referenced(objects: list[Obj]) -> set[tuple[str, str, str]]:
    """(kind, namespace, name) of claims, templates and PodGroups that file pods and PodGroups use."""
    refs: set[tuple[str, str, str]] = set()
    for obj in objects:
        if obj.get("kind") not in ("Pod", "PodGroup"):
            continue
        ns, _ = object_key(obj)
        spec = obj.get("spec") or {}
        for entry in spec.get("resourceClaims") or []:
            if entry.get("resourceClaimName"):
                refs.add(("ResourceClaim", ns, entry["resourceClaimName"]))
            if entry.get("resourceClaimTemplateName"):
                refs.add(("ResourceClaimTemplate", ns, entry["resourceClaimTemplateName"]))
        group = (spec.get("schedulingGroup") or {}).get("podGroupName")
        if obj.get("kind") == "Pod" and group:
            refs.add(("PodGroup", ns, group))
    return refs


def namespace_of(state: ClusterState, kind: str, name: str) -> str:
    """The one namespace holding a ``kind`` named ``name`` (for ``-A``): a
    :class:`NotFoundError` when none does, a :class:`UsageError` naming them when several do."""
    namespaces = sorted({object_key(obj)[0] for obj in state.objects(kind) if object_key(obj)[1] == name})
    if not namespaces:
        raise NotFoundError(f"{kind} {name!r} not found in any namespace")
    if len(namespaces) > 1:
        raise UsageError(f"{kind} {name!r} exists in namespaces {', '.join(namespaces)}: name one with -n NAMESPACE "
                         "(without -A) or as KIND/NAMESPACE/NAME")
    return namespaces[0]


def resolve_targets(state: ClusterState, targets: Iterable[str], objects: Iterable[tuple[Obj, str]] = (),
                    namespace: str = "default", gates: FeatureGates | None = None, explicit_namespace: bool = False,
                    warn: Callable[[str], None] | None = None, all_namespaces: bool = False) -> PreviewPlan:
    """The :class:`PreviewPlan` for ``(object, origin)`` pairs from files, then command-line ``targets``.

    Objects from files are new objects: each is admitted as the API server creates it
    (:func:`admit_file_objects`) before it is previewed. With ``explicit_namespace`` (``-n``
    given), a file object in another namespace is an error, as kubectl makes it.

    Claims, templates and PodGroups in the files that pods (or PodGroups) in the files refer
    to are not previewed on their own: they serve those pods. With ``all_namespaces`` (``-A``)
    a target that names no namespace is looked up in every namespace (:func:`namespace_of`). Raises :class:`UsageError` when
    there is nothing to preview or a target is malformed, and :class:`NotFoundError` when a
    named object is not in the state (nor in the files).
    """
    pairs = [(_with_namespace(obj, namespace, origin, explicit_namespace), origin) for obj, origin in objects]
    pairs = admit_file_objects(pairs, state, gates, warn)
    refs = _referenced([obj for obj, _ in pairs])

    def is_support(obj: Obj) -> bool:
        return (str(obj.get("kind")), *object_key(obj)) in refs

    support = [obj for obj, _ in pairs if is_support(obj)]
    resolver = Resolver(state, namespace, gates, support=support)
    for obj, origin in pairs:
        if not is_support(obj):
            resolver.add_object(obj, origin)
    for text in targets:
        # "" cannot come from the text (empty parts are refused): it marks "no namespace named"
        target = parse_target(text, "" if all_namespaces else namespace)
        if not target.namespace:
            target = replace(target, namespace=namespace_of(state, target.kind, target.name))
        resolver.add_target(target)
    plan = resolver.plan
    if not plan.claims and not plan.extended and not plan.pods:
        raise UsageError("nothing to preview: name a claim, template/NAME, pod/NAME, podgroup/NAME or use -f FILE")
    return plan
