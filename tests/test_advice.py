"""Apply-time advice (kubectl_dra.advice): warnings about valid objects the cluster cannot serve."""

from __future__ import annotations

import time
from typing import Any

import pytest

from kubectl_dra.advice import CLOCK_EVERY, AdviceTimeout, Inventory, advise

GPU_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
             "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
NIC_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "nic.example.com"},
             "spec": {"selectors": [{"cel": {"expression": 'device.driver == "nic.example.com"'}}]}}


def gpu_slice(node: str, count: int, *, model: Any = "a100", name: str | None = None,
              driver: str = "gpu.example.com") -> dict[str, Any]:
    attr = {"int": model} if isinstance(model, int) else {"string": model}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name or f"{node}-gpu"},
            "spec": {"driver": driver, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"model": attr, "memory": {"int": 80}}}
                                 for i in range(count)]}}


def shared_slice(count: int) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "fabric"},
            "spec": {"driver": "gpu.example.com", "allNodes": True,
                     "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"remote-{i}", "attributes": {"model": {"string": "a100"}}}
                                 for i in range(count)]}}


def claim(*requests: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {"requests": list(requests)}}}


def exactly(name: str = "gpu", cls: str = "gpu.example.com", *selectors: str, count: int | None = None,
            mode: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"deviceClassName": cls}
    if selectors:
        body["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if count is not None:
        body["count"] = count
    if mode is not None:
        body["allocationMode"] = mode
    return {"name": name, "exactly": body}


CLUSTER = Inventory.from_objects([GPU_CLASS, NIC_CLASS], [gpu_slice("node-a", 4), gpu_slice("node-b", 2)])


def test_a_request_the_cluster_can_serve_gets_no_advice() -> None:
    assert advise("ResourceClaim", claim(exactly(count=4)), CLUSTER) == []
    assert advise("ResourceClaim", claim(exactly("gpu", "gpu.example.com", 'device.attributes["gpu.example.com"].model == "a100"')),
                  CLUSTER) == []


def test_a_missing_device_class_is_named() -> None:
    (warning,) = advise("ResourceClaim", claim(exactly(cls="tpu.example.com")), CLUSTER)
    assert "DeviceClass tpu.example.com does not exist" in warning and "request gpu" in warning
    assert "Pending" in warning


def test_a_selector_no_device_matches_names_the_request_class_and_selector() -> None:
    selector = 'device.attributes["gpu.example.com"].model == "h100"'
    (warning,) = advise("ResourceClaim", claim(exactly("gpu", "gpu.example.com", selector)), CLUSTER)
    assert warning == ("pods using this claim will stay Pending: no device matches gpu: class gpu.example.com, "
                       f"selector {selector}")


def test_a_class_that_matches_nothing_is_the_reason_too() -> None:
    (warning,) = advise("ResourceClaim", claim(exactly(cls="nic.example.com")), CLUSTER)
    assert "no device matches gpu: class nic.example.com" in warning


def test_a_count_no_single_node_can_hold() -> None:
    (warning,) = advise("ResourceClaim", claim(exactly(count=5)), CLUSTER)
    assert "gpu asks for 5 devices but at most 4 matching devices are reachable from any single node" in warning
    # All mode takes what there is: no count to exceed
    assert advise("ResourceClaim", claim(exactly(mode="All")), CLUSTER) == []


def test_network_attached_devices_count_for_every_node() -> None:
    cluster = Inventory.from_objects([GPU_CLASS], [gpu_slice("node-a", 4), shared_slice(2)])
    assert advise("ResourceClaim", claim(exactly(count=6)), cluster) == []
    (warning,) = advise("ResourceClaim", claim(exactly(count=7)), cluster)
    assert "at most 6 matching devices" in warning


def test_first_available_warns_only_when_no_alternative_matches() -> None:
    def first_available(*alternatives: tuple[str, str]) -> dict[str, Any]:
        return {"name": "gpu", "firstAvailable": [
            {"name": name, "deviceClassName": "gpu.example.com", "selectors": [{"cel": {"expression": e}}]}
            for name, e in alternatives]}

    h100 = ("big", 'device.attributes["gpu.example.com"].model == "h100"')
    a100 = ("small", 'device.attributes["gpu.example.com"].model == "a100"')
    assert advise("ResourceClaim", claim(first_available(h100, a100)), CLUSTER) == []
    (warning,) = advise("ResourceClaim", claim(first_available(h100, ("b200", h100[1].replace("h100", "b200")))),
                        CLUSTER)
    assert "no device matches any subrequest of gpu" in warning and "gpu/big" in warning and "gpu/b200" in warning


def test_templates_are_advised_like_their_claims() -> None:
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "t", "namespace": "default"}, "spec": {"spec": claim(exactly(cls="x"))["spec"]}}
    (warning,) = advise("ResourceClaimTemplate", template, CLUSTER)
    assert "DeviceClass x does not exist" in warning


def test_a_device_class_whose_selectors_match_nothing() -> None:
    tpu = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "tpu.example.com"},
           "spec": {"selectors": [{"cel": {"expression": 'device.driver == "tpu.example.com"'}}]}}
    (warning,) = advise("DeviceClass", tpu, CLUSTER)
    assert "no device in the cluster matches the selectors of DeviceClass tpu.example.com (6 devices published)" in warning
    assert advise("DeviceClass", GPU_CLASS, CLUSTER) == []
    assert advise("DeviceClass", {"metadata": {"name": "any"}, "spec": {}}, CLUSTER) == []


def test_a_slice_attribute_whose_type_differs_from_the_drivers_other_slices() -> None:
    (warning,) = advise("ResourceSlice", gpu_slice("node-c", 1, model=7), CLUSTER)
    assert warning.startswith("attribute gpu.example.com/model is an int on device gpu-0 but a string on device gpu-0 "
                              "of ResourceSlice node-")
    # the same slice updated, another driver's attribute of the same name, or the same type: nothing
    assert advise("ResourceSlice", gpu_slice("node-a", 1, model=7), Inventory.from_objects([], [gpu_slice("node-a", 4)])) == []
    assert advise("ResourceSlice", gpu_slice("node-c", 1, model=7, driver="other.example.com"), CLUSTER) == []
    assert advise("ResourceSlice", gpu_slice("node-c", 1), CLUSTER) == []


def test_an_undecidable_selector_is_no_reason_to_warn() -> None:
    # a runtime error (attribute missing on every device) is not "matches nothing"
    selector = 'device.attributes["gpu.example.com"].missing == "x"'
    assert advise("ResourceClaim", claim(exactly("gpu", "gpu.example.com", selector)), CLUSTER) == []


def test_past_the_deadline_advice_stops() -> None:
    cluster = Inventory.from_objects([GPU_CLASS], [gpu_slice(f"n{i}", 8) for i in range(CLOCK_EVERY // 4)])
    with pytest.raises(AdviceTimeout):
        advise("ResourceClaim", claim(exactly(count=1)), cluster, deadline=time.monotonic() - 1)
    assert advise("ResourceClaim", claim(exactly(count=1)), cluster, deadline=None) == []


def test_other_kinds_get_no_advice() -> None:
    assert advise("Pod", {"metadata": {"name": "p"}}, CLUSTER) == []
