"""The explanation never disagrees with the allocation: every allocation scenario through
``kubectl dra explain -o json``, checked against the scenario's expected allocation (the
preview runner checks the same expectation for ``preview -o json``)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubectl_dra.cli.main import cli
from tests.conftest import corpus, scenario_files
from tests.test_conformance_allocation import claim_targets, gates_flag, loaded, write_state

pytestmark = corpus  # every test here reads the shared conformance corpus

SCENARIO_FILES = scenario_files("allocation")


def _run(args: list[str]) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code in (0, 1, 2), result.output
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.stem)
def test_explanation_agrees_with_allocation(path: Path, tmp_path: Path) -> None:
    scenario = loaded(path).raw  # parsed per test: collection stays fast under xdist
    if scenario.get("skip"):
        pytest.skip(str(scenario["skip"]))
    name = scenario["name"]
    node = scenario["node"]["name"]
    state = write_state(scenario, tmp_path)
    common = ["--state", str(state), "--node", node, "-o", "json", "--feature-gates", gates_flag(scenario),
              *claim_targets(scenario)]
    code, doc = _run(["explain", *common])
    (entry,) = [n for n in doc["nodes"] if n["node"] == node]
    expect = scenario["expect"]
    if "error" in expect:
        assert code == 2
        assert entry["status"] == "Error" and entry["reason"].startswith("error: ") and entry["error"]
        assert doc["fit"] == 0
        return
    if expect.get("unschedulable"):
        assert code == 1
        assert entry["status"] == "Unschedulable"
        assert entry["reason"] and entry["reason"] != "fits"
        assert not any(r["allocated"] for r in entry["requests"]), f"{name}: devices shown as allocated"
        assert f"0/1 node fit: 1 {entry['reason']}" in doc["summary"]
        return
    assert code == 0
    assert entry["status"] == "Allocated" and entry["reason"] == "fits"
    assert doc["summary"].endswith("1/1 node fit")
    # the devices the explanation shows per request are exactly the allocation's
    shown = Counter((r["request"], d["driver"], d["pool"], d["device"])
                    for r in entry["requests"] for d in r["allocated"])
    allocated = Counter((d["request"], d["driver"], d["pool"], d["device"])
                        for a in expect["allocations"] for d in a.get("devices") or [])
    assert shown == allocated, f"{name}: explanation {shown} vs allocation {allocated}"
    # and none of them is listed as rejected for the request it was allocated to
    for r in entry["requests"]:
        chosen = {(d["driver"], d["pool"], d["device"]) for d in r["allocated"]}
        rejected = {(d["driver"], d["pool"], d["device"]) for g in r["rejections"] for d in g["devices"]}
        assert not chosen & rejected, f"{name}: {r['request']} both allocated and rejected: {chosen & rejected}"
