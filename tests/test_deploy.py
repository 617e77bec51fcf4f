"""The kustomize base in ``deploy/``: it builds, every manifest is valid for Kubernetes 1.37,
the pieces fit together (selectors, names, ports, RBAC, webhook rules), and no step of the
deploy can block writes in the cluster (apply order, failure policies, the fail-closed overlay,
the image rename, priority, spreading and the disruption budget)."""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from tests.conftest import REPO
from webhook.cli import certs as certs_command
from webhook.cli import serve as serve_command

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
K8S_VERSION = "1.37.0"
NAMESPACE = "dra-system"

REQUIRED_RULES = {
    ("resource.k8s.io", "v1", "resourceslices"),
    ("resource.k8s.io", "v1", "deviceclasses"),
    ("resource.k8s.io", "v1", "resourceclaims"),
    ("resource.k8s.io", "v1", "resourceclaimtemplates"),
    ("scheduling.k8s.io", "v1beta1", "podgroups"),
    ("", "v1", "pods"),
}


def render(directory: Path) -> list[dict[str, Any]]:
    """The output of ``kubectl kustomize DIRECTORY``, in the order ``kubectl apply -k`` applies it."""
    if not Path(KUBECTL).exists():
        pytest.skip("kubectl is not installed (needed for kubectl kustomize)")
    result = subprocess.run([KUBECTL, "kustomize", str(directory)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert docs, "kustomize produced no manifests"
    return docs


@pytest.fixture(scope="module")
def manifests() -> list[dict[str, Any]]:
    """The output of ``kubectl kustomize deploy/``."""
    return render(REPO / "deploy")


@pytest.fixture(scope="module")
def fail_closed() -> list[dict[str, Any]]:
    """The output of ``kubectl kustomize deploy/fail-closed/``."""
    return render(REPO / "deploy" / "fail-closed")


def one(manifests: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [m for m in manifests if m["kind"] == kind and (name is None or m["metadata"]["name"] == name)]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def all_of(manifests: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [m for m in manifests if m["kind"] == kind]


def matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A metav1.LabelSelector evaluated against a label set."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def namespace_labels(name: str, **extra: str) -> dict[str, str]:
    """The labels the API server gives a namespace (the immutable name label) plus any others."""
    return {"kubernetes.io/metadata.name": name, **extra}


def test_expected_objects(manifests: list[dict[str, Any]]) -> None:
    kinds = sorted(m["kind"] for m in manifests)
    for kind in ("Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
                 "Deployment", "PodDisruptionBudget", "Service", "ValidatingWebhookConfiguration",
                 "MutatingWebhookConfiguration", "Job", "CronJob", "PriorityClass"):
        assert kind in kinds, f"{kind} missing from deploy/"


def test_every_manifest_is_valid_for_kubernetes_1_37(manifests: list[dict[str, Any]],
                                                     fail_closed: list[dict[str, Any]]) -> None:
    """Strict schema validation (unknown fields are errors) against the 1.37 OpenAPI schemas."""
    assert "1.37" in kubernetes_validate.utils.all_versions()[-1]
    problems = []
    for doc in manifests + fail_closed:
        try:
            version = kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
            assert version == "1.37"
        except kubernetes_validate.ValidationError as exc:
            problems.append(f"{doc['kind']}/{doc['metadata']['name']}: {exc.message}")
    assert not problems, "\n".join(problems)


def test_schema_validation_catches_mistakes(manifests: list[dict[str, Any]]) -> None:
    """The validator used above does reject a wrong Deployment and a wrong webhook configuration."""
    broken = copy.deepcopy(one(manifests, "Deployment"))
    broken["spec"]["template"]["spec"]["containers"][0]["readOnlyRootFileSystem"] = True  # misspelt field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)
    broken = copy.deepcopy(one(manifests, "ValidatingWebhookConfiguration"))
    broken["webhooks"][0]["timeoutSeconds"] = "5"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


def test_namespaced_objects_live_in_the_webhook_namespace(manifests: list[dict[str, Any]]) -> None:
    one(manifests, "Namespace", NAMESPACE)
    for kind in ("ServiceAccount", "Role", "RoleBinding", "Deployment", "Service", "PodDisruptionBudget", "Job",
                 "CronJob"):
        for doc in all_of(manifests, kind):
            assert doc["metadata"].get("namespace") == NAMESPACE, f"{kind}/{doc['metadata']['name']}"


def test_deployment_is_hardened_and_probed(manifests: list[dict[str, Any]]) -> None:
    deployment = one(manifests, "Deployment")
    spec = deployment["spec"]
    assert spec["replicas"] >= 2
    assert matches(spec["selector"], spec["template"]["metadata"]["labels"])
    pod = spec["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
    (container,) = pod["containers"]
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    for probe_name, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        probe = container[probe_name]["httpGet"]
        assert probe["path"] == path and probe["scheme"] == "HTTPS" and probe["port"] in ports
    resources = container["resources"]
    assert resources["requests"]["cpu"] and resources["requests"]["memory"] and resources["limits"]["memory"]
    assert container["image"].startswith("ghcr.io/kubectl-dra/dra-webhook:")
    # a pod stops only after its endpoint is gone, within the grace period
    assert 0 < container["lifecycle"]["preStop"]["sleep"]["seconds"] < pod["terminationGracePeriodSeconds"]


def test_deployment_args_are_understood_by_dra_webhook_serve(manifests: list[dict[str, Any]]) -> None:
    """The container args parse as ``dra-webhook serve`` options and point at the mounted Secret."""
    pod = one(manifests, "Deployment")["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["args"][0] == "serve"
    params = serve_command.make_context("serve", list(container["args"][1:])).params
    port = int(params["bind"].rsplit(":", 1)[1])
    assert port in {p["containerPort"] for p in container["ports"]}
    assert params["workers"] >= 2
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    tls_dir = mounts["tls"]
    assert Path(params["cert_file"]).parent == Path(tls_dir) == Path(params["key_file"]).parent
    job_params = _certs_params(one(manifests, "Job"))
    assert volumes["tls"]["secret"]["secretName"] == job_params["secret"]
    # writable scratch space for the metrics with a read-only root file system
    assert "emptyDir" in volumes[next(n for n, p in mounts.items() if p == "/tmp")]
    assert params["metrics_dir"].startswith("/tmp/")


def test_service_and_pdb_select_the_webhook_pods(manifests: list[dict[str, Any]]) -> None:
    deployment = one(manifests, "Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    service = one(manifests, "Service")
    assert matches({"matchLabels": service["spec"]["selector"]}, labels)
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    port_names = {p["name"] for p in container["ports"]}
    (port,) = service["spec"]["ports"]
    assert port["targetPort"] in port_names and port["port"] == 443
    pdb = one(manifests, "PodDisruptionBudget")
    assert matches(pdb["spec"]["selector"], labels)
    assert 1 <= pdb["spec"]["minAvailable"] < deployment["spec"]["replicas"]


def _webhooks(manifests: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    hooks = []
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        for hook in one(manifests, kind)["webhooks"]:
            hooks.append((kind, hook))
    return hooks


def test_webhook_configurations(manifests: list[dict[str, Any]]) -> None:
    service = one(manifests, "Service")
    for kind, hook in _webhooks(manifests):
        assert hook["sideEffects"] == "None"
        assert hook["admissionReviewVersions"] == ["v1"]
        assert 1 <= hook["timeoutSeconds"] <= 10
        ref = hook["clientConfig"]["service"]
        assert ref["name"] == service["metadata"]["name"] and ref["namespace"] == service["metadata"]["namespace"]
        assert ref["port"] == service["spec"]["ports"][0]["port"]
        assert ref["path"] == ("/validate" if kind.startswith("Validating") else "/mutate")
        for rule in hook["rules"]:
            assert set(rule["operations"]) == {"CREATE", "UPDATE"}


def test_webhook_rules_cover_every_kind(manifests: list[dict[str, Any]]) -> None:
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        covered = set()
        for hook in one(manifests, kind)["webhooks"]:
            for rule in hook["rules"]:
                for group in rule["apiGroups"]:
                    for version in rule["apiVersions"]:
                        for resource in rule["resources"]:
                            covered.add((group, version, resource))
        assert covered == REQUIRED_RULES, kind


def _scopes(hook: dict[str, Any]) -> set[str]:
    return {rule.get("scope", "*") for rule in hook["rules"]}


def _resources(hook: dict[str, Any]) -> set[str]:
    return {resource for rule in hook["rules"] for resource in rule["resources"]}


def test_namespace_selector_never_blocks_system_namespaces(manifests: list[dict[str, Any]]) -> None:
    """Only the immutable name label decides; kube-system and the webhook's own namespace never match,
    ordinary namespaces always do, and extra labels cannot opt a namespace out. Every webhook for
    namespaced kinds has such a selector; cluster-scoped kinds get webhooks of their own."""
    for kind, hook in _webhooks(manifests):
        assert _scopes(hook) in ({"Namespaced"}, {"Cluster"}), f"{kind} {hook['name']}: mixed scopes"
        if _scopes(hook) == {"Cluster"}:
            continue
        selector = hook["namespaceSelector"]
        keys = {e["key"] for e in selector.get("matchExpressions") or []} | set(selector.get("matchLabels") or {})
        assert keys == {"kubernetes.io/metadata.name"}, f"{kind} {hook['name']}: selector keys {keys}"
        assert not matches(selector, namespace_labels("kube-system"))
        assert not matches(selector, namespace_labels(NAMESPACE))
        assert matches(selector, namespace_labels("default"))
        assert matches(selector, namespace_labels("team-a", **{"resource.kubernetes.io/admin-access": "true"}))
        assert matches(selector, namespace_labels("team-b", webhooks="off", **{"control-plane": "true"}))


# --- a deploy that cannot lock the cluster ------------------------------------------------------

WEBHOOK_KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")


def test_apply_order_registers_the_webhooks_last(manifests: list[dict[str, Any]]) -> None:
    """``kubectl apply -k`` sends the objects in the rendered order: everything the server and the
    cert job need (namespace, accounts, RBAC, priority class, Service, Deployment, Job) comes before
    the webhook configurations, which come last."""
    kinds = [m["kind"] for m in manifests]
    assert kinds[0] == "Namespace"
    first_webhook = min(i for i, k in enumerate(kinds) if k in WEBHOOK_KINDS)
    assert all(k in WEBHOOK_KINDS for k in kinds[first_webhook:]), kinds
    for needed in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "PriorityClass",
                   "Service", "Deployment", "PodDisruptionBudget", "Job", "CronJob"):
        assert max(i for i, k in enumerate(kinds) if k == needed) < first_webhook, f"{needed} after the webhooks"


def test_no_step_of_the_base_deploy_blocks_a_write(manifests: list[dict[str, Any]]) -> None:
    """At every prefix of the apply (before the cert job wrote the caBundle, before a pod is ready,
    or forever if the image cannot be pulled) an unreachable webhook admits: every webhook the base
    registers is failurePolicy Ignore, and none carries a caBundle the job has not made."""
    for step in range(1, len(manifests) + 1):
        registered = [m for m in manifests[:step] if m["kind"] in WEBHOOK_KINDS]
        for config in registered:
            for hook in config["webhooks"]:
                assert hook["failurePolicy"] == "Ignore", f"{config['kind']} {hook['name']} blocks writes while down"
                assert "caBundle" not in hook["clientConfig"]
    assert (REPO / "deploy" / "fail-closed") not in {
        (REPO / "deploy" / r).resolve() for r in yaml.safe_load((REPO / "deploy/kustomization.yaml").read_text())["resources"]
    }, "kubectl apply -k deploy/ must not fail closed"


def test_fail_closed_overlay_changes_only_the_claims_failure_policy(manifests: list[dict[str, Any]],
                                                                    fail_closed: list[dict[str, Any]]) -> None:
    """deploy/fail-closed is the base with one change: the validating webhook for the namespaced claim
    kinds fails closed; it still never matches kube-system or dra-system."""
    assert len(fail_closed) == len(manifests)
    differing = [(a, b) for a, b in zip(manifests, fail_closed) if a != b]
    assert len(differing) == 1
    base, closed = differing[0]
    assert closed["kind"] == "ValidatingWebhookConfiguration"
    changed = [(x, y) for x, y in zip(base["webhooks"], closed["webhooks"]) if x != y]
    assert len(changed) == 1
    before, after = changed[0]
    assert {**before, "failurePolicy": "Fail"} == after
    assert _resources(after) == {"resourceclaims", "resourceclaimtemplates", "podgroups"}
    assert _scopes(after) == {"Namespaced"}
    assert not matches(after["namespaceSelector"], namespace_labels("kube-system"))
    assert not matches(after["namespaceSelector"], namespace_labels(NAMESPACE))


@pytest.mark.parametrize("variant", ["base", "fail-closed"])
def test_drivers_and_workloads_never_wait_for_the_webhook(variant: str, manifests: list[dict[str, Any]],
                                                          fail_closed: list[dict[str, Any]]) -> None:
    """ResourceSlices and DeviceClasses (cluster-scoped: no namespace exclusion applies) and Pods are
    admitted whenever the webhook is down, in every variant; so is everything mutation sees."""
    docs = manifests if variant == "base" else fail_closed
    for kind, hook in _webhooks(docs):
        resources = _resources(hook)
        if resources & {"resourceslices", "deviceclasses", "pods"} or kind.startswith("Mutating"):
            assert hook["failurePolicy"] == "Ignore", f"{kind} {hook['name']}"
        if resources & {"resourceslices", "deviceclasses"}:
            assert resources <= {"resourceslices", "deviceclasses"} and _scopes(hook) == {"Cluster"}
            assert hook["timeoutSeconds"] <= 3, "drivers wait for this call on every slice they publish"


def test_readme_fails_closed_only_after_the_server_is_ready() -> None:
    """The documented sequence: apply, wait for the cert job, wait for the rollout, and only then
    (optionally) the fail-closed overlay; the image is pushed and renamed before any of it."""
    text = (REPO / "deploy" / "README.md").read_text()
    order = ["docker build", "docker push", "newName:", "kubectl apply -k my-dra-webhook/",
             "wait --for=condition=complete job/dra-webhook-certs", "rollout status deployment/dra-webhook",
             "../deploy/fail-closed"]
    positions = [text.find(step) for step in order]
    assert -1 not in positions, dict(zip(order, positions))
    assert positions == sorted(positions), dict(zip(order, positions))


def test_an_images_overlay_renames_every_container(tmp_path: Path, manifests: list[dict[str, Any]]) -> None:
    """The rename the README documents reaches the Deployment, the Job and the CronJob."""
    (name,) = [i["name"] for i in yaml.safe_load((REPO / "deploy/base/kustomization.yaml").read_text())["images"]]
    overlay = tmp_path / "my-dra-webhook"
    overlay.mkdir()
    relative = Path(*[".."] * len(overlay.parts[1:])) / REPO.relative_to("/") / "deploy"
    (overlay / "kustomization.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": [str(relative)],
        "images": [{"name": name, "newName": "registry.example.com/platform/dra-webhook", "newTag": "1.2.3"}]}))
    images = [c["image"] for doc in render(overlay) for c in _containers(doc)]
    assert len(images) == len([c for doc in manifests for c in _containers(doc)]) == 3
    assert set(images) == {"registry.example.com/platform/dra-webhook:1.2.3"}


def _containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The containers of a Deployment, Job or CronJob."""
    spec = doc.get("spec") or {}
    if doc["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    if doc["kind"] not in ("Deployment", "Job", "CronJob"):
        return []
    return spec["template"]["spec"]["containers"]


def test_priority_class(manifests: list[dict[str, Any]]) -> None:
    pod = one(manifests, "Deployment")["spec"]["template"]["spec"]
    priority = one(manifests, "PriorityClass", pod["priorityClassName"])
    assert 0 < priority["value"] <= 1_000_000_000, "above ordinary pods, below the system-* classes"
    assert priority["globalDefault"] is False
    assert "namespace" not in priority["metadata"]


def _spread_places(nodes: int, pods: int, max_skew: int) -> list[int] | None:
    """Pods placed one by one on the emptiest node, as the scheduler's hard spread rule allows
    (count on the node after placing it, minus the fewest on any node, at most ``max_skew``),
    or None if one cannot be placed."""
    placed = [0] * nodes
    for _ in range(pods):
        node = min(range(nodes), key=lambda n: placed[n])
        if placed[node] + 1 - min(placed) > max_skew:
            return None
        placed[node] += 1
    return placed


def test_spreading_holds_with_the_replicas_and_the_disruption_budget(manifests: list[dict[str, Any]]) -> None:
    """Replicas go to different nodes (a hard rule that counts only nodes they may run on), so a
    node failure leaves a replica serving; the rule can be met on one node and during a rolling update;
    the PDB lets a drain evict one replica at a time, and never waits on pods that are not ready."""
    deployment = one(manifests, "Deployment")
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"]["labels"]
    (by_node,) = [c for c in pod["topologySpreadConstraints"] if c["topologyKey"] == "kubernetes.io/hostname"]
    assert by_node["whenUnsatisfiable"] == "DoNotSchedule" and by_node["maxSkew"] == 1
    assert by_node["nodeTaintsPolicy"] == "Honor", "tainted/cordoned nodes must not count as empty domains"
    assert matches(by_node["labelSelector"], labels)
    replicas = spec["replicas"]
    surge = spec["strategy"]["rollingUpdate"]["maxSurge"]
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    pdb = one(manifests, "PodDisruptionBudget")
    assert matches(pdb["spec"]["selector"], labels)
    assert pdb["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"
    min_available = pdb["spec"]["minAvailable"]
    assert 1 <= min_available < replicas, "a drain must be able to evict a replica"
    for nodes in (1, 2, 3, 5):
        for pods in (replicas, replicas + surge):
            placed = _spread_places(nodes, pods, by_node["maxSkew"])
            assert placed is not None, f"{pods} pods cannot be placed on {nodes} nodes"
            if nodes >= 2 and pods == replicas:
                assert replicas - max(placed) >= min_available, f"one node holds too many replicas: {placed}"


# Measured with benchmarks/bench_admission.py (docs/benchmarks.md, "Resources" of the admission webhook).
#: peak PSS of the server under the largest slices (150 MiB) plus two workers' warnings caches of
#: 4,000 matched devices (2 x 10.7 MiB)
MEASURED_PEAK_PSS_MIB = 170
#: server CPU per claim of a spec the worker has not seen (0.28-0.30 ms; 0.42-0.47 ms on a busier VM
#: before the claim rules built their paths only for errors)
MEASURED_CLAIM_CPU_MS = 0.3


def _quantity_mib(value: str) -> float:
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024}
    return float(value[:-2]) * units[value[-2:]]


def test_resources_come_from_the_measured_figures(manifests: list[dict[str, Any]]) -> None:
    (container,) = one(manifests, "Deployment")["spec"]["template"]["spec"]["containers"]
    requests, limits = container["resources"]["requests"], container["resources"]["limits"]
    assert MEASURED_PEAK_PSS_MIB <= _quantity_mib(requests["memory"]) <= 2 * MEASURED_PEAK_PSS_MIB
    assert _quantity_mib(limits["memory"]) >= 3 * MEASURED_PEAK_PSS_MIB
    cpu_millis = int(requests["cpu"].rstrip("m"))
    claims_per_second = cpu_millis / MEASURED_CLAIM_CPU_MS
    assert 50 <= claims_per_second <= 1000, claims_per_second  # a pod's request sustains a namespace's burst
    # what the manifests' comment and deploy/README.md say is what was measured
    deployment_text = (REPO / "deploy/base/deployment.yaml").read_text()
    readme = " ".join((REPO / "deploy/README.md").read_text().split())
    for text in (deployment_text, readme):
        assert f"~{MEASURED_PEAK_PSS_MIB} MiB" in text and f"~{MEASURED_CLAIM_CPU_MS} ms" in text


def test_readiness_can_use_the_cluster(manifests: list[dict[str, Any]]) -> None:
    """The server is ready only with a cluster configuration (admin-access lookups): the pod mounts its
    service account token and its readiness probe asks /readyz."""
    pod = one(manifests, "Deployment")["spec"]["template"]["spec"]
    assert pod.get("automountServiceAccountToken", True) is True
    account = one(manifests, "ServiceAccount", pod["serviceAccountName"])
    assert account.get("automountServiceAccountToken", True) is True
    assert pod["containers"][0]["readinessProbe"]["httpGet"]["path"] == "/readyz"


def test_cert_job_retries_until_the_webhooks_exist(manifests: list[dict[str, Any]]) -> None:
    """The job may run before the webhook configurations are created (they are applied last): it retries."""
    job = one(manifests, "Job")
    assert job["spec"]["backoffLimit"] >= 3
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"


def _rules_of(manifests: list[dict[str, Any]], service_account: str) -> list[tuple[str, str | None, dict[str, Any]]]:
    """(role kind, namespace or None for cluster-wide, rule) granted to a ServiceAccount."""
    granted = []
    for binding_kind, role_kind in (("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")):
        for binding in all_of(manifests, binding_kind):
            subjects = binding.get("subjects") or []
            if not any(s["kind"] == "ServiceAccount" and s["name"] == service_account and s["namespace"] == NAMESPACE
                       for s in subjects):
                continue
            role = one(manifests, binding["roleRef"]["kind"], binding["roleRef"]["name"])
            assert binding["roleRef"]["kind"] == role_kind or role_kind == "Role"
            scope = binding["metadata"].get("namespace") if binding_kind == "RoleBinding" else None
            granted.extend((role["kind"], scope, rule) for rule in role["rules"])
    return granted


def test_rbac_has_no_wildcards(manifests: list[dict[str, Any]]) -> None:
    for kind in ("ClusterRole", "Role"):
        for role in all_of(manifests, kind):
            for rule in role["rules"]:
                for key in ("apiGroups", "resources", "verbs", "resourceNames"):
                    assert "*" not in (rule.get(key) or []), f"{kind}/{role['metadata']['name']}: wildcard {key}"


def test_webhook_may_only_get_namespaces_and_read_devices(manifests: list[dict[str, Any]]) -> None:
    deployment = one(manifests, "Deployment")
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    one(manifests, "ServiceAccount", account)
    grants = _rules_of(manifests, account)
    # namespace labels for admin access; the watch cache of the apply-time warnings; no write
    assert [(r["apiGroups"], r["resources"], r["verbs"]) for _, _, r in grants] == [
        ([""], ["namespaces"], ["get"]),
        (["resource.k8s.io"], ["deviceclasses", "resourceslices"], ["list", "watch"])]


def test_cert_job_rbac_is_limited_to_its_secrets_and_webhooks(manifests: list[dict[str, Any]]) -> None:
    job = one(manifests, "Job")
    params = _certs_params(job)
    account = job["spec"]["template"]["spec"]["serviceAccountName"]
    one(manifests, "ServiceAccount", account)
    secrets = {params["secret"], params["ca_secret"] or params["secret"] + "-ca"}
    configs = set(params["validating_webhooks"]) | set(params["mutating_webhooks"])
    for _, scope, rule in _rules_of(manifests, account):
        resources = set(rule["resources"])
        if resources == {"secrets"}:
            assert scope == NAMESPACE, "secrets must be granted in the webhook namespace only"
            if set(rule["verbs"]) == {"create"}:
                assert not rule.get("resourceNames")
            else:
                assert set(rule["verbs"]) <= {"get", "update", "patch"}
                assert set(rule["resourceNames"]) == secrets
        else:
            assert resources <= {"validatingwebhookconfigurations", "mutatingwebhookconfigurations"}
            assert rule["apiGroups"] == ["admissionregistration.k8s.io"]
            assert set(rule["verbs"]) <= {"get", "patch"}
            assert set(rule["resourceNames"]) == configs


def _certs_params(workload: dict[str, Any]) -> dict[str, Any]:
    spec = workload["spec"]
    pod = (spec["jobTemplate"]["spec"] if workload["kind"] == "CronJob" else spec)["template"]["spec"]
    (container,) = pod["containers"]
    assert container["args"][0] == "certs"
    return certs_command.make_context("certs", list(container["args"][1:])).params


def test_cert_job_targets_the_deployed_names(manifests: list[dict[str, Any]]) -> None:
    service = one(manifests, "Service")
    validating = one(manifests, "ValidatingWebhookConfiguration")["metadata"]["name"]
    mutating = one(manifests, "MutatingWebhookConfiguration")["metadata"]["name"]
    for workload in all_of(manifests, "Job") + all_of(manifests, "CronJob"):
        params = _certs_params(workload)
        assert params["service"] == service["metadata"]["name"]
        assert params["namespace"] == service["metadata"]["namespace"]
        assert params["validating_webhooks"] == (validating,)
        assert params["mutating_webhooks"] == (mutating,)
        pod = (workload["spec"]["jobTemplate"]["spec"] if workload["kind"] == "CronJob" else workload["spec"])
        container = pod["template"]["spec"]["containers"][0]
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert pod["template"]["spec"]["securityContext"]["runAsNonRoot"] is True


def _overlay(tmp_path: Path, base: str, components: list[str]) -> list[dict[str, Any]]:
    """``kubectl kustomize`` of an overlay of ``deploy/<base>`` with ``deploy/<component>`` components."""
    overlay = tmp_path / "my-dra-webhook"
    overlay.mkdir()
    up = Path(*[".."] * len(overlay.parts[1:])) / REPO.relative_to("/") / "deploy"
    (overlay / "kustomization.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "resources": [str(up / base)], "components": [str(up / c) for c in components]}))
    return render(overlay)


@pytest.mark.parametrize("base", ["", "fail-closed"])
def test_the_network_policy_admits_only_the_api_server_to_the_webhook_port(tmp_path: Path, base: str,
                                                                          manifests: list[dict[str, Any]]) -> None:
    assert not all_of(manifests, "NetworkPolicy"), "the base has none: the API server's range is cluster-specific"
    rendered = _overlay(tmp_path, base, ["network-policy"])
    policy = one(rendered, "NetworkPolicy")
    assert kubernetes_validate.validate(policy, K8S_VERSION, strict=True) == "1.37"
    assert policy["metadata"]["namespace"] == NAMESPACE
    pod = one(rendered, "Deployment")["spec"]["template"]
    assert matches(policy["spec"]["podSelector"], pod["metadata"]["labels"])
    assert policy["spec"]["policyTypes"] == ["Ingress"], "egress to the API server stays open"
    (rule,) = policy["spec"]["ingress"]
    ports = {p["name"]: p["containerPort"] for p in pod["spec"]["containers"][0]["ports"]}
    assert [p["port"] for p in rule["ports"]] == [ports["https"]]
    assert [list(peer) for peer in rule["from"]] == [["ipBlock"]]
    # everything else is the overlay's own
    assert len(rendered) == len(manifests) + 1
