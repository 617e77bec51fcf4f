"""The kustomize base in ``deploy/``: it builds, every manifest is valid for Kubernetes 1.37,
and the pieces fit together (selectors, names, ports, RBAC, webhook rules)."""

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


@pytest.fixture(scope="module")
def manifests() -> list[dict[str, Any]]:
    """The output of ``kubectl kustomize deploy/``."""
    result = subprocess.run([KUBECTL, "kustomize", str(REPO / "deploy")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert docs, "kustomize produced no manifests"
    return docs


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
                 "MutatingWebhookConfiguration", "Job"):
        assert kind in kinds, f"{kind} missing from deploy/"


def test_every_manifest_is_valid_for_kubernetes_1_37(manifests: list[dict[str, Any]]) -> None:
    """Strict schema validation (unknown fields are errors) against the 1.37 OpenAPI schemas."""
    assert "1.37" in kubernetes_validate.utils.all_versions()[-1]
    problems = []
    for doc in manifests:
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
    # writable scratch space for gunicorn and the metrics with a read-only root file system
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
    assert one(manifests, "ValidatingWebhookConfiguration")["webhooks"][0]["failurePolicy"] == "Fail"


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


def test_namespace_selector_never_blocks_system_namespaces(manifests: list[dict[str, Any]]) -> None:
    """Only the immutable name label decides; kube-system and the webhook's own namespace never match,
    ordinary namespaces always do, and extra labels cannot opt a namespace out."""
    for kind, hook in _webhooks(manifests):
        selector = hook["namespaceSelector"]
        keys = {e["key"] for e in selector.get("matchExpressions") or []} | set(selector.get("matchLabels") or {})
        assert keys == {"kubernetes.io/metadata.name"}, f"{kind} {hook['name']}: selector keys {keys}"
        assert not matches(selector, namespace_labels("kube-system"))
        assert not matches(selector, namespace_labels(NAMESPACE))
        assert matches(selector, namespace_labels("default"))
        assert matches(selector, namespace_labels("team-a", **{"resource.kubernetes.io/admin-access": "true"}))
        assert matches(selector, namespace_labels("team-b", webhooks="off", **{"control-plane": "true"}))


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


def test_webhook_may_only_get_namespaces(manifests: list[dict[str, Any]]) -> None:
    deployment = one(manifests, "Deployment")
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    one(manifests, "ServiceAccount", account)
    grants = _rules_of(manifests, account)
    assert [(r["apiGroups"], r["resources"], r["verbs"]) for _, _, r in grants] == [([""], ["namespaces"], ["get"])]


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
