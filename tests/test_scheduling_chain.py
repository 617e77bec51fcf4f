"""The scheduler's filter chain for pods, end to end through preview's evaluate_pod and the CLI."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_dra.errors import InputError
from kubectl_dra.preview.pods import evaluate_pod
from kubectl_dra.scheduling import SchedulingIndex, fit_error
from kubectl_dra.scheduling.chain import PodFilters
from kubectl_dra.state import ClusterState


def node(name: str, zone: str = "z1", cpu: str = "4", pods: str = "110", **extra: Any) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": zone}},
            "spec": extra.pop("spec", {}),
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": pods, **extra}}}


def pod(name: str, cpu: str | None = None, node_name: str | None = None, labels: dict | None = None,
        **spec: Any) -> dict:
    container: dict[str, Any] = {"name": "c", "image": "x"}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    if "ports" in spec:
        container["ports"] = spec.pop("ports")
    body: dict[str, Any] = {"containers": [container], **spec}
    if node_name:
        body["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                           "labels": labels or {}},
            "spec": body, "status": {"phase": "Running" if node_name else "Pending"}}


def state(*objs: dict) -> ClusterState:
    s = ClusterState()
    s.extend(objs)
    return s


def reasons(result: Any) -> dict[str, tuple[str, ...]]:
    return {n.node: tuple(n.reasons) for n in result.nodes}


def test_pod_without_claims_is_answered_with_the_scheduler_words() -> None:
    s = state(node("a"), node("b"), pod("busy", "3", "a"))
    result = evaluate_pod(s, pod("new", "2"))
    assert reasons(result) == {"b": (), "a": ("Insufficient cpu",)}
    (a,) = [n for n in result.nodes if n.node == "a"]
    assert a.plugin == "NodeResourcesFit" and a.detail == ("cpu: 1 of 4 left, the pod needs 2",)


def test_finished_pods_do_not_count_and_fit_error_line() -> None:
    done = pod("done", "3", "a")
    done["status"]["phase"] = "Succeeded"
    s = state(node("a"), node("b", pods="1"), pod("x", "1", "b"), done)
    result = evaluate_pod(s, pod("new", "5"))
    assert reasons(result) == {"a": ("Insufficient cpu",), "b": ("Too many pods", "Insufficient cpu")}
    assert result.fit_error() == "0/2 nodes are available: 1 Too many pods, 2 Insufficient cpu."


def test_fit_error_sorts_the_histogram_as_strings() -> None:
    line = fit_error(5, [["Insufficient cpu"], ["Insufficient cpu"], ["cannot allocate all claims"]] + [
        ["cannot allocate all claims"]] * 2)
    assert line == "0/5 nodes are available: 2 Insufficient cpu, 3 cannot allocate all claims."


def test_host_ports() -> None:
    s = state(node("a"), node("b"), pod("web", None, "a", ports=[{"containerPort": 80, "hostPort": 8080}]))
    result = evaluate_pod(s, pod("new", None, ports=[{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.1"}]))
    assert reasons(result)["a"] == ("node(s) didn't have free ports for the requested pod ports",)
    assert reasons(result)["b"] == ()


def anti(key: str = "kubernetes.io/hostname") -> dict:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "trainer"}}, "topologyKey": key}]}}


def test_required_anti_affinity_both_ways() -> None:
    s = state(node("a"), node("b"), node("c", zone="z2"), pod("trainer-3", None, "a", {"app": "trainer"}))
    result = evaluate_pod(s, pod("new", None, labels={"app": "trainer"}, affinity=anti()))
    assert reasons(result) == {"a": ("node(s) didn't match pod anti-affinity rules",), "b": (), "c": ()}
    (a,) = [n for n in result.nodes if n.node == "a"]
    assert a.detail == ("anti-affinity with pod default/trainer-3 on this node",)
    # the bound pod's anti-affinity (by zone) keeps a matching newcomer out of its zone
    s = state(node("a"), node("b"), node("c", zone="z2"), pod("old", None, "a", {"app": "x"}, affinity=anti("zone")))
    result = evaluate_pod(s, pod("new", None, labels={"app": "trainer"}))
    assert reasons(result) == {"a": ("node(s) didn't satisfy existing pods anti-affinity rules",),
                               "b": ("node(s) didn't satisfy existing pods anti-affinity rules",), "c": ()}


def spread(max_skew: int = 1, key: str = "zone", **extra: Any) -> list[dict]:
    return [{"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "web"}}, **extra}]


def test_topology_spread() -> None:
    s = state(node("a"), node("b", zone="z2"), node("nolabel"), pod("w1", None, "a", {"app": "web"}))
    s.nodes[2]["metadata"]["labels"] = {}
    result = evaluate_pod(s, pod("new", None, labels={"app": "web"}, topologySpreadConstraints=spread()))
    assert reasons(result) == {
        "a": ("node(s) didn't match pod topology spread constraints",), "b": (),
        "nolabel": ("node(s) didn't match pod topology spread constraints (missing required label)",)}
    (a,) = [n for n in result.nodes if n.node == "a"]
    assert "zone=z1 would have skew 2 > maxSkew 1" in a.detail[0]


@pytest.mark.parametrize("spec, field", [
    ({"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}, "spec.containers[0].resources.requests[cpu]"),
    ({"containers": [{"name": "c"}], "topologySpreadConstraints": spread(-1)}, "spec.topologySpreadConstraints[0].maxSkew"),
    ({"containers": [{"name": "c"}], "topologySpreadConstraints": spread(1, "bad key!")},
     "spec.topologySpreadConstraints[0].topologyKey"),
])
def test_bad_input_names_object_and_field(spec: dict, field: str) -> None:
    bad = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec}
    with pytest.raises(InputError) as err:
        PodFilters(SchedulingIndex([node("a")]), bad)
    assert "Pod default/p" in str(err.value) and field in str(err.value)


def test_node_without_allocatable_is_refused_as_the_scheduler_does() -> None:
    bare = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bare"}}
    result = evaluate_pod(state(bare), pod("new", None))
    (outcome,) = result.nodes
    assert outcome.reasons == ("Too many pods",) and "no status.allocatable" in outcome.detail[-1]


def test_a_previewed_bound_pod_is_not_counted_against_itself() -> None:
    running = pod("p", "3", "a", ports=[{"containerPort": 1, "hostPort": 9}])
    result = evaluate_pod(state(node("a"), running), running)
    assert reasons(result) == {"a": ()}


def fit_of(s: ClusterState, pod_obj: dict, placement: str = "ranked") -> Any:
    from kubectl_dra.fit import count_fit, stop_reasons
    from kubectl_dra.gates import FeatureGates
    from kubectl_dra.preview import candidate_nodes, resolve_targets

    gates = FeatureGates.default()
    plan = resolve_targets(s, [], [(pod_obj, "pod.yaml")], gates=gates)
    result = count_fit(s, plan, gates, candidate_nodes(s), placement=placement)
    stop_reasons(s, result, candidate_nodes(s))
    return result


@pytest.mark.parametrize("placement", ["ranked", "spread"])
def test_fit_binds_each_replica_as_a_pod(placement: str) -> None:
    s = state(node("a"), node("b", cpu="3"), pod("busy", "1", "a"))
    result = fit_of(s, pod("new", "1"), placement)
    assert result.per_node == {"a": 3, "b": 3} and result.count == 6
    assert set(result.reasons.values()) == {"Insufficient cpu"}


@pytest.mark.parametrize("placement", ["ranked", "spread"])
def test_fit_one_replica_per_node_with_anti_affinity(placement: str) -> None:
    s = state(node("a"), node("b"), node("c", zone="z2"))
    result = fit_of(s, pod("t", "1", labels={"app": "trainer"}, affinity=anti()), placement)
    assert result.per_node == {"a": 1, "b": 1, "c": 1}
    assert set(result.reasons.values()) == {"node(s) didn't match pod anti-affinity rules"}


@pytest.mark.parametrize("placement", ["ranked", "spread"])
def test_fit_keeps_the_zone_spread(placement: str) -> None:
    # z1 has room for 4 pods of 1 cpu (two nodes of 2), z2 for 1: maxSkew 1 stops z1 at 2
    s = state(node("a", cpu="2"), node("b", cpu="2"), node("c", zone="z2", cpu="1"))
    result = fit_of(s, pod("w", "1", labels={"app": "web"}, topologySpreadConstraints=spread()), placement)
    per_zone = {"z1": result.per_node["a"] + result.per_node["b"], "z2": result.per_node["c"]}
    assert per_zone == {"z1": 2, "z2": 1}


def run_cli(*argv: str) -> tuple[int, str, str]:
    from click.testing import CliRunner

    from kubectl_dra.cli.main import cli

    result = CliRunner().invoke(cli, list(argv), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def write(path: Any, *objs: dict) -> str:
    import json

    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objs)}))
    return str(path)


def test_cli_bad_quantities_in_the_state_exit_2_naming_object_and_field(tmp_path: Any) -> None:
    bad_node = node("a")
    bad_node["status"]["allocatable"]["cpu"] = "lots"
    code, _, err = run_cli("preview", "--state", write(tmp_path / "s.json", bad_node), "-f",
                           write(tmp_path / "p.json", pod("new", "1")))
    assert code == 2 and "Node" in err and "status.allocatable[cpu]" in err and "lots" in err
    bad_pod = pod("busy", None, "a")
    bad_pod["spec"]["containers"][0]["resources"] = {"requests": {"memory": "lots"}}
    code, _, err = run_cli("preview", "--state", write(tmp_path / "s2.json", node("a"), bad_pod), "-f",
                           write(tmp_path / "p2.json", pod("new", "1")))
    assert code == 2 and "busy" in err and "spec.containers[0].resources.requests[memory]" in err


def test_cli_pod_with_claimed_volumes_gets_a_note_and_the_fit_error_line(tmp_path: Any) -> None:
    with_pvc = pod("new", "8", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "d"}}])
    code, out, err = run_cli("preview", "--state", write(tmp_path / "s.json", node("a"), node("b")), "-f",
                             write(tmp_path / "p.json", with_pvc), "-o", "json")
    import json

    doc = json.loads(out)
    assert code == 1 and "PersistentVolumeClaims" in " ".join(doc["notes"]) and "preemption" in doc["modelled"]
    assert doc["fitError"] == "0/2 nodes are available: 2 Insufficient cpu."
    assert {n["filter"] for n in doc["nodes"]} == {"NodeResourcesFit"}
    code, _, err = run_cli("preview", "--state", str(tmp_path / "s.json"), "-f", str(tmp_path / "p.json"))
    assert code == 1 and "warning: the pod uses PersistentVolumeClaims" in err
    assert err.rstrip().endswith("0/2 nodes are available: 2 Insufficient cpu.")
