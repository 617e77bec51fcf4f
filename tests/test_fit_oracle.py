"""``kubectl dra fit`` against an oracle that shares no code with it: on tiny clusters the
replica count is found by brute force (the largest number of disjoint device sets, each a
valid allocation of the template's claim, over every node), and compared with what the
command prints. Nothing of kubectl_dra is imported but the command line.

The clusters are those where upstream's first-fit allocation is also the best packing
(exclusive devices, one request of ``count`` devices, optionally all with the same model):
so the brute-force maximum is the number of replicas the scheduler would place one by one.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubectl_dra.cli.main import cli

DRIVER = "gpu.example.com"
MODELS = ("a100", "h100")


def tiny_cluster(seed: int) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]], int, bool]:
    """Objects of a random tiny cluster, the devices of each node as the oracle sees them
    (name, model, usable), the claim's device count and whether it matches the model."""
    rng = random.Random(seed)
    count = rng.choice([1, 1, 2, 3])
    same_model = rng.random() < 0.5
    objs: list[dict[str, Any]] = [{
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}]
    devices: dict[str, list[dict[str, Any]]] = {}
    for n in range(rng.randint(1, 3)):
        node = f"node-{n}"
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})
        listed, seen = [], []
        for d in range(rng.randint(0, 6)):
            model = rng.choice(MODELS)
            tainted = rng.random() < 0.15
            device: dict[str, Any] = {"name": f"gpu-{d}", "attributes": {"model": {"string": model}}}
            if tainted:
                device["taints"] = [{"key": "broken", "value": "yes", "effect": "NoSchedule"}]
            listed.append(device)
            seen.append({"name": f"gpu-{d}", "model": model, "usable": not tainted})
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
                     "spec": {"driver": DRIVER, "nodeName": node, "devices": listed,
                              "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}}})
        # some devices already allocated to a claim that exists
        for i, dev in enumerate(seen):
            if dev["usable"] and rng.random() < 0.25:
                dev["usable"] = False
                objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                             "metadata": {"name": f"held-{node}-{i}", "namespace": "default"},
                             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
                             "status": {"allocation": {"devices": {"results": [
                                 {"request": "r", "driver": DRIVER, "pool": node, "device": dev["name"]}]}}}})
        devices[node] = seen
    return objs, devices, count, same_model


def template(count: int, same_model: bool) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu", "count": count}}]}
    if same_model:
        devices["constraints"] = [{"requests": ["gpus"], "matchAttribute": f"{DRIVER}/model"}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "job", "namespace": "default"}, "spec": {"spec": {"devices": devices}}}


def most_replicas(devices: list[dict[str, Any]], count: int, same_model: bool) -> int:
    """Brute force: the most disjoint sets of ``count`` usable devices (of one model if asked)."""
    def place(left: tuple[dict[str, Any], ...]) -> int:
        best = 0
        for group in itertools.combinations(range(len(left)), count):
            if same_model and len({left[i]["model"] for i in group}) > 1:
                continue
            best = max(best, 1 + place(tuple(d for i, d in enumerate(left) if i not in group)))
        return best

    return place(tuple(d for d in devices if d["usable"]))


@pytest.mark.parametrize("seed", range(40))
def test_fit_count_equals_the_brute_force_count(seed: int, tmp_path: Path) -> None:
    objs, devices, count, same_model = tiny_cluster(seed)
    state = tmp_path / "cluster.yaml"
    state.write_text(yaml.safe_dump_all(objs))
    claim = tmp_path / "template.yaml"
    claim.write_text(yaml.safe_dump(template(count, same_model)))
    expected = sum(most_replicas(d, count, same_model) for d in devices.values())
    result = CliRunner().invoke(cli, ["fit", "--state", str(state), "-f", str(claim), "-o", "json", "--max", "50"],
                                catch_exceptions=False)
    assert result.exit_code == (0 if expected else 1), result.output
    document = json.loads(result.stdout)
    assert document["replicas"] == expected, (devices, count, same_model, document["summary"])
    per_node = {n["node"]: n["replicas"] for n in document["nodes"]}
    for node, node_devices in devices.items():
        assert per_node.get(node, 0) == most_replicas(node_devices, count, same_model), node


def test_the_oracle_counts_by_hand() -> None:
    """The brute force itself, on cases counted by hand."""
    def devs(*spec: str) -> list[dict[str, Any]]:
        return [{"name": f"d{i}", "model": s.rstrip("!"), "usable": not s.endswith("!")} for i, s in enumerate(spec)]

    assert most_replicas(devs(), 1, False) == 0
    assert most_replicas(devs("a100", "h100", "a100!"), 1, False) == 2
    assert most_replicas(devs("a100", "h100", "a100", "h100", "h100"), 2, False) == 2
    assert most_replicas(devs("a100", "h100", "a100", "h100", "h100"), 2, True) == 2   # a100 pair, h100 pair
    assert most_replicas(devs("a100", "h100", "a100", "h100!", "h100"), 3, True) == 0
    assert most_replicas(devs("a100", "a100", "a100", "h100", "h100", "h100"), 3, True) == 2
