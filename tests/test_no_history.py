"""Results never depend on what the process did before: every cache has an owner (the caller's
ClusterIndex, an Allocator, one call), none lives at module level keyed by identity."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from kubectl_dra.allocation import Allocator
from kubectl_dra.allocation.index import ClusterIndex
from kubectl_dra.errors import DraError
from kubectl_dra.gates import FeatureGates
from kubectl_dra.state import ClusterState
from tests.conformance_compare import load_scenario
from tests.conftest import REPO, corpus, scenario_files

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}
CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}}
CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}


def gpu_slice(device: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "gpu.example.com", "nodeName": "node-1", "devices": [{"name": device}],
                     "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}}}


def allocated_device(state: ClusterState, index: ClusterIndex | None = None) -> str:
    outcome = Allocator(state, FeatureGates.default(), index).allocate(NODE, [CLAIM])
    return outcome.results[0]["devices"]["results"][0]["device"]


def test_a_slice_replaced_in_place_is_seen_by_a_new_allocator() -> None:
    state = ClusterState()
    state.extend([NODE, CLASS, gpu_slice("old-gpu")])
    assert allocated_device(state) == "old-gpu"
    state.resource_slices[0] = gpu_slice("new-gpu")  # same list, same length
    assert allocated_device(state) == "new-gpu"


def test_a_kept_index_describes_the_snapshot_it_was_built_from() -> None:
    state = ClusterState()
    state.extend([NODE, CLASS, gpu_slice("old-gpu")])
    index = ClusterIndex(state)
    state.resource_slices[0] = gpu_slice("new-gpu")
    assert allocated_device(state, index) == "old-gpu"  # the caller's index, the caller's snapshot
    assert allocated_device(state, ClusterIndex(state)) == "new-gpu"


def outcome_of(path: Path) -> Any:
    """One scenario's answer in a comparable form (share IDs are random: only their presence)."""
    sc = load_scenario(path)
    try:
        out = Allocator(sc.state, FeatureGates.only(sc.features)).allocate(sc.node, sc.claims)
    except DraError as exc:
        return ["error", type(exc).__name__]
    if not out.allocated:
        return ["unschedulable"]
    text = json.dumps(out.results, sort_keys=True, default=str)
    for result in (r for claim in out.results for r in claim["devices"]["results"]):
        if result.get("shareID"):
            text = text.replace(result["shareID"], "<share>")
    return ["allocated", text]


@corpus
def test_the_corpus_in_any_order_in_one_process_answers_as_a_fresh_process() -> None:
    files = [p for p in scenario_files("allocation") if not load_scenario(p).skip]
    fresh = subprocess.run(
        [sys.executable, "-c", "import json, sys; from tests.test_no_history import outcome_of; "
         "from pathlib import Path; print(json.dumps([outcome_of(Path(p)) for p in sys.argv[1:]]))",
         *map(str, files)], capture_output=True, text=True, cwd=REPO, check=True)
    expected = dict(zip(files, json.loads(fresh.stdout)))
    shuffled = list(files)
    random.Random(20261201).shuffle(shuffled)
    for order in (list(reversed(files)), shuffled):
        answers = {path: outcome_of(path) for path in order}
        differ = [p.stem for p in files if answers[p] != expected[p]]
        assert not differ, f"answers depend on what ran before: {differ}"
