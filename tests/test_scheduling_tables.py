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
