"""Upstream's filter-plugin test tables (kubernetes/kubernetes pkg/scheduler/framework/plugins/*
and the pod-requests helper), restated as data in tests/data/scheduling/, through our filters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_dra.scheduling import PodFilters, SchedulingIndex

DATA = Path(__file__).parent / "data" / "scheduling"


def load(name: str) -> tuple[dict, list[dict]]:
    doc = yaml.safe_load((DATA / name).read_text())
    return doc.get("defaults") or {}, doc["cases"]


def cases(name: str) -> list[Any]:
    defaults, rows = load(name)
    return [pytest.param(defaults, row, id=row["name"],
                         marks=[pytest.mark.skip(reason=row["not_applicable"])] if "not_applicable" in row else [])
            for row in rows]


def container(i: int, resources: dict, prefix: str = "c") -> dict:
    resources = dict(resources)
    out: dict[str, Any] = {"name": f"{prefix}{i}", "image": "x"}
    if "restartPolicy" in resources:
        out["restartPolicy"] = resources.pop("restartPolicy")
    if resources:
        out["resources"] = {"requests": resources}
    return out


def resource_pod(name: str, containers: list[dict], init: list[dict] = (), overhead: dict | None = None,
                 node: str | None = None) -> dict:
    spec: dict[str, Any] = {"containers": [container(i, c) for i, c in enumerate(containers)] or
                            [{"name": "c", "image": "x"}]}
    if init:
        spec["initContainers"] = [container(i, c, "i") for i, c in enumerate(init)]
    if overhead:
        spec["overhead"] = overhead
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec,
            "status": {"phase": "Running" if node else "Pending"}}


@pytest.mark.parametrize("defaults, case", cases("noderesources.yaml"))
def test_noderesources_table(defaults: dict, case: dict) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"allocatable": case.get("allocatable", defaults["allocatable"])}}
    bound = resource_pod("bound", [case["bound"]], node="n")
    index = SchedulingIndex([node], [bound])
    pod = resource_pod("p", case.get("containers") or [], case.get("init") or [], case.get("overhead"))
    status = PodFilters(index, pod).filter("n")
    assert (list(status.reasons) if status else []) == case["want"]
    if status:
        assert status.plugin == "NodeResourcesFit"


def port_list(specs: list[str]) -> list[dict]:
    out = []
    for spec in specs:
        protocol, ip, port = spec.split("/")
        entry: dict[str, Any] = {"containerPort": int(port), "hostPort": int(port), "protocol": protocol}
        if ip:
            entry["hostIP"] = ip
        out.append(entry)
    return out


@pytest.mark.parametrize("defaults, case", cases("nodeports.yaml"))
def test_nodeports_table(defaults: dict, case: dict) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"pods": "10"}}}
    bound = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b", "namespace": "default"},
             "spec": {"nodeName": "n", "containers": [{"name": "c", "ports": port_list(case["bound"])}]}}
    spec: dict[str, Any] = {"containers": [{"name": "c", "ports": port_list(case["pod"])}]}
    init = [{"name": "i", "ports": port_list(case.get("pod_init", []))}] if case.get("pod_init") else []
    init += [{"name": "s", "restartPolicy": "Always", "ports": port_list(case["pod_sidecar"])}] \
        if case.get("pod_sidecar") else []
    if init:
        spec["initContainers"] = init
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec}
    status = PodFilters(SchedulingIndex([node], [bound]), pod).filter("n")
    assert (status is not None) is case["refused"]
    if status is not None:
        assert status.reasons == ("node(s) didn't have free ports for the requested pod ports",)


def taint(text: str) -> dict:
    key_value, effect = text.rsplit(":", 1)
    key, _, value = key_value.partition("=")
    return {"key": key, "value": value, "effect": effect}


@pytest.mark.parametrize("defaults, case", cases("tainttoleration.yaml"))
def test_tainttoleration_table(defaults: dict, case: dict) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "spec": {"taints": [taint(t) for t in case["taints"]]}, "status": {"allocatable": {"pods": "10"}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c"}], "tolerations": case["tolerations"]}}
    status = PodFilters(SchedulingIndex([node]), pod).filter("n")
    assert (status is not None) is case["refused"]
    if status is not None:
        assert (status.plugin, status.reasons) == ("TaintToleration", ("node(s) had untolerated taint(s)",))


def requirement(parts: list[str]) -> dict:
    key, operator, *values = parts
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = values
    return out


@pytest.mark.parametrize("defaults, case", cases("nodeaffinity.yaml"))
def test_nodeaffinity_table(defaults: dict, case: dict) -> None:
    name = case.get("node", "n")
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": case.get("labels") or {}},
            "status": {"allocatable": {"pods": "10"}}}
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if "selector" in case:
        spec["nodeSelector"] = case["selector"]
    if "terms" in case:
        terms = [{**({"matchExpressions": [requirement(r) for r in t["expr"]]} if "expr" in t else {}),
                  **({"matchFields": [requirement(r) for r in t["fields"]]} if "fields" in t else {})}
                 for t in case["terms"]]
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                             {"nodeSelectorTerms": terms}}}
    elif case.get("affinity_without_required"):
        spec["affinity"] = {"nodeAffinity": {}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec}
    status = PodFilters(SchedulingIndex([node]), pod).filter(name)
    assert (status is not None) is case["refused"]
    if status is not None:
        assert (status.plugin, status.reasons) == ("NodeAffinity", ("node(s) didn't match Pod's node affinity/selector",))


def labels(text: str) -> dict[str, str]:
    if not text or text == "-":
        return {}
    return dict((part.split("=", 1) if "=" in part else (part, "")) for part in text.split(","))


def bound_pod(text: str) -> dict:
    head, _, label_text = text.partition(": ")
    ref, node = head.split("@")
    ns, _, name = ref.rpartition("/")
    meta: dict[str, Any] = {"name": name.rstrip("!"), "namespace": ns or "default", "labels": labels(label_text)}
    if name.endswith("!"):
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": node, "containers": [{"name": "c"}]}, "status": {"phase": "Running"}}


@pytest.mark.parametrize("defaults, case", cases("podtopologyspread.yaml"))
def test_podtopologyspread_table(defaults: dict, case: dict) -> None:
    from kubectl_dra.scheduling.podtopologyspread import REASON, REASON_MISSING_LABEL, SpreadState, parse_constraints

    taints = set(case.get("taint_nodes") or ())
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": labels(text)},
              "spec": {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]} if n in taints else {}}
             for n, text in (case.get("nodes") or defaults["nodes4"]).items()]
    constraints = []
    for skew, key, exists, *extra in case["constraints"]:
        constraints.append({"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchExpressions": [{"key": exists, "operator": "Exists"}]},
                            **(extra[0] if extra else {})})
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "topologySpreadConstraints": constraints}
    if case.get("node_affinity_in"):
        key, *values = case["node_affinity_in"]
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": key, "operator": "In", "values": values}]}]}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default",
                                                           "labels": labels(case["pod"])}, "spec": spec}
    index = SchedulingIndex(nodes, [bound_pod(p) for p in case["pods"]])
    state = SpreadState(pod, "default", parse_constraints(pod, "Pod default/p"), index)
    got = {}
    for name in case["want"]:
        status = state.filter(index.infos[name])
        got[name] = "ok" if status is None else {REASON: "skew", REASON_MISSING_LABEL: "label"}[status.reasons[0]]
    assert got == case["want"]


def selector_of(requirements: list[str]) -> dict:
    exprs = []
    for text in requirements:
        if " in (" in text or " notin (" in text:
            key, op, values = text.replace("(", "").replace(")", "").split(" ", 2)
            exprs.append({"key": key, "operator": "In" if op == "in" else "NotIn", "values": values.split(",")})
        elif text.startswith("!"):
            exprs.append({"key": text[1:], "operator": "DoesNotExist"})
        else:
            exprs.append({"key": text, "operator": "Exists"})
    return {"matchExpressions": exprs}


def affinity_terms(terms: list[list]) -> list[dict]:
    out = []
    for key, *rest in terms:
        extra = rest.pop() if rest and isinstance(rest[-1], dict) else {}
        out.append({"topologyKey": key, "labelSelector": selector_of(rest), **extra})
    return out


def affinity_pod(name: str, spec: dict) -> dict:
    affinity: dict[str, Any] = {}
    if spec.get("affinity"):
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": affinity_terms(spec["affinity"])}
    if spec.get("anti"):
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": affinity_terms(spec["anti"])}
    body: dict[str, Any] = {"containers": [{"name": "c"}], "affinity": affinity}
    if spec.get("node"):
        body["nodeName"] = spec["node"]
    return {"apiVersion": "v1", "kind": "Pod", "status": {"phase": "Running"}, "spec": body,
            "metadata": {"name": name, "namespace": spec.get("ns", "default"), "labels": labels(spec.get("labels", ""))}}


@pytest.mark.parametrize("defaults, case", cases("interpodaffinity.yaml"))
def test_interpodaffinity_table(defaults: dict, case: dict) -> None:
    from kubectl_dra.scheduling.interpodaffinity import (
        REASON_AFFINITY, REASON_ANTI_AFFINITY, REASON_EXISTING_ANTI_AFFINITY)

    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": labels(text)},
              "status": {"allocatable": {"pods": "10"}}}
             for n, text in (case.get("nodes") or defaults["machine1"]).items()]
    index = SchedulingIndex(nodes, [affinity_pod(f"bound-{i}", p) for i, p in enumerate(case["pods"])])
    filters = PodFilters(index, affinity_pod("incoming", case["pod"]))
    words = {REASON_AFFINITY: "affinity", REASON_ANTI_AFFINITY: "anti", REASON_EXISTING_ANTI_AFFINITY: "existing"}
    got = {}
    for name in case["want"]:
        status = filters.filter(name)
        got[name] = "ok" if status is None else words[status.reasons[0]]
    assert got == case["want"]


def request_container(i: int, spec: dict, prefix: str) -> tuple[dict, dict | None]:
    spec = dict(spec)
    name = spec.pop("name", f"{prefix}{i}")
    out: dict[str, Any] = {"name": name}
    if "restartPolicy" in spec:
        out["restartPolicy"] = spec.pop("restartPolicy")
    status = spec.pop("status", None)
    limits = spec.pop("limits", None)
    out["resources"] = {"requests": spec, **({"limits": limits} if limits else {})}
    if status is None:
        return out, None
    st: dict[str, Any] = {"name": name}
    if "actual" in status:
        st["resources"] = {"requests": status["actual"]}
    if "allocated" in status:
        st["allocatedResources"] = status["allocated"]
    return out, st


@pytest.mark.parametrize("defaults, case", cases("podrequests.yaml"))
def test_pod_requests_table(defaults: dict, case: dict) -> None:
    from kubectl_dra.scheduling.resources import pod_requests, to_units
    from kubectl_dra.quantity import Quantity

    containers = [request_container(i, c, "c") for i, c in enumerate(case.get("containers") or [])]
    inits = [request_container(i, c, "i") for i, c in enumerate(case.get("init") or [])]
    spec: dict[str, Any] = {"containers": [c for c, _ in containers] or [{"name": "none"}],
                            "initContainers": [c for c, _ in inits]}
    if case.get("overhead"):
        spec["overhead"] = case["overhead"]
    if case.get("pod_level"):
        spec["resources"] = {"requests": case["pod_level"]}
    status: dict[str, Any] = {"containerStatuses": [s for _, s in containers if s],
                              "initContainerStatuses": [s for _, s in inits if s]}
    if case.get("infeasible"):
        status["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec,
           "status": status}
    want = {k: to_units(k, Quantity.from_json(v).nanos()) for k, v in case["want"].items()}
    assert pod_requests(pod, use_status=bool(case.get("bound"))) == want
