"""The live-cluster source through the real ``kubernetes`` client against the fake HTTPS API server."""

from __future__ import annotations

import copy
import io
import socket
import sys
from pathlib import Path

import pytest
import yaml

from kubectl_dra.errors import ClusterAccessError
from kubectl_dra.state import live
from kubectl_dra.state.live import kubeconfig_namespace, load_live_state
from tests.fake_apiserver import FakeAPIServer, ResourceType, DEFAULT_TYPES


def node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"zone": "a"}}}


def resource_slice(name: str, node_name: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": "gpu.example.com", "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "x1"}},
                                  "capacity": {"memory": {"value": "80Gi"}}}]}}


def claim(name: str, namespace: str = "default") -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}


def cluster(nodes: int = 5) -> list[dict]:
    objs = [node(f"node-{i}") for i in range(nodes)]
    objs += [resource_slice(f"slice-{i}", f"node-{i}") for i in range(nodes)]
    objs += [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
              "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}]
    objs += [claim("c-0"), claim("c-1", "team-a")]
    objs += [{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
              "metadata": {"name": "pg", "namespace": "default"}, "spec": {}}]
    objs += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a",
                                                                    "labels": {"a": "b"}}}]
    return objs


@pytest.fixture
def server():
    with FakeAPIServer(cluster(), token="s3cret", max_page_size=2) as srv:
        yield srv


@pytest.fixture
def kubeconfig(server, tmp_path):
    return str(server.write_kubeconfig(tmp_path / "config", namespace="team-a"))


def test_loads_every_kind_page_by_page(server, kubeconfig):
    state = load_live_state(kubeconfig=kubeconfig)
    assert [n["metadata"]["name"] for n in state.nodes] == [f"node-{i}" for i in range(5)]
    assert len(state.resource_slices) == 5 and len(state.resource_claims) == 2
    assert len(state.device_classes) == 1 and len(state.pod_groups) == 1 and len(state.namespaces) == 1
    # list items come without kind/apiVersion; the source puts them back
    assert state.resource_slices[0]["kind"] == "ResourceSlice"
    assert state.resource_slices[0]["apiVersion"] == "resource.k8s.io/v1"
    assert state.resource_slices[0]["spec"]["devices"][0]["capacity"]["memory"]["value"] == "80Gi"
    # 5 nodes at 2 per page: three requests, the later ones with a continue token
    pages = server.list_requests("/api/v1/nodes")
    assert len(pages) == 3
    assert "continue" not in pages[0].query and all("continue" in p.query for p in pages[1:])
    assert all(p.query.get("limit") == str(live.PAGE_SIZE) for p in pages)
    assert all(r.authorization == "Bearer s3cret" for r in server.requests)


def test_one_consistent_snapshot_while_paging(server, kubeconfig):
    added = []

    def add_node_after_first_page(request):
        if request.path == "/api/v1/nodes" and "continue" in request.query and not added:
            added.append(True)
            server.add(node("node-late"))

    server.on_request = add_node_after_first_page
    state = load_live_state(kubeconfig=kubeconfig, workers=1)
    assert "node-late" not in [n["metadata"]["name"] for n in state.nodes]
    server.on_request = None
    again = load_live_state(kubeconfig=kubeconfig)
    assert "node-late" in [n["metadata"]["name"] for n in again.nodes]


def test_expired_continue_token_restarts_the_list(server, kubeconfig):
    expired = []

    def expire(request):
        if request.path == "/api/v1/nodes" and "continue" in request.query and not expired:
            expired.append(True)
            server.expire_continue_tokens()

    server.on_request = expire
    state = load_live_state(kubeconfig=kubeconfig, workers=1)
    names = [n["metadata"]["name"] for n in state.nodes]
    assert names == [f"node-{i}" for i in range(5)]  # complete, no duplicates
    pages = server.list_requests("/api/v1/nodes")
    restart = [p for p in pages if "limit" not in p.query]
    assert restart and "continue" not in restart[0].query  # the restart lists afresh, without a limit


def test_wrong_token_is_401_with_a_clear_message(server, tmp_path):
    config = server.write_kubeconfig(tmp_path / "bad", token="wrong")
    with pytest.raises(ClusterAccessError) as err:
        load_live_state(kubeconfig=str(config))
    assert "unauthorized (401)" in err.value.message
    assert err.value.exit_code == 2


def test_forbidden_required_list_fails(server, kubeconfig):
    server.fail("/apis/resource.k8s.io/v1/resourceslices", 403,
                'resourceslices.resource.k8s.io is forbidden: User "dev" cannot list resource "resourceslices"')
    with pytest.raises(ClusterAccessError) as err:
        load_live_state(kubeconfig=kubeconfig)
    assert "forbidden (403)" in err.value.message
    assert "resourceslices" in err.value.message and 'User "dev"' in err.value.message


def test_forbidden_optional_list_only_warns(server, kubeconfig):
    server.fail("/api/v1/pods", 403, "pods is forbidden")
    state = load_live_state(kubeconfig=kubeconfig)
    assert state.pods == [] and len(state.nodes) == 5
    assert any("skipped pods" in w and "403" in w for w in state.warnings)


def test_server_error_on_a_later_page(server, kubeconfig):
    server.fail("/api/v1/nodes", 500, "etcdserver: leader changed", later_pages_only=True)
    with pytest.raises(ClusterAccessError) as err:
        load_live_state(kubeconfig=kubeconfig)
    assert "failed (500)" in err.value.message and "leader changed" in err.value.message


def test_timeout(server, kubeconfig):
    path = "/apis/resource.k8s.io/v1/deviceclasses"
    server.fail(path, 200, delay=5)
    with pytest.raises(ClusterAccessError) as err:
        load_live_state(kubeconfig=kubeconfig, timeout=0.5)
    assert "timed out after 0.5s" in err.value.message
    assert len(server.list_requests(path)) == 1  # one timeout, no retries of reads


def test_cluster_without_dra_api(tmp_path):
    with FakeAPIServer(cluster(), serve_dra=False) as srv:
        config = srv.write_kubeconfig(tmp_path / "config")
        with pytest.raises(ClusterAccessError) as err:
            load_live_state(kubeconfig=str(config))
    assert "does not serve resource.k8s.io/v1" in err.value.message


def test_pod_groups_are_optional(tmp_path):
    types = [t for t in DEFAULT_TYPES if t.kind != "PodGroup"]
    with FakeAPIServer(cluster(), types=types) as srv:
        state = load_live_state(kubeconfig=str(srv.write_kubeconfig(tmp_path / "config")))
    assert state.pod_groups == [] and len(state.nodes) == 5


def test_pod_groups_in_another_version(tmp_path):
    types = [t for t in DEFAULT_TYPES if t.kind != "PodGroup"]
    types.append(ResourceType("PodGroup", "scheduling.k8s.io", "v1alpha3", "podgroups", True))
    objs = cluster()
    with FakeAPIServer(objs, types=types) as srv:
        state = load_live_state(kubeconfig=str(srv.write_kubeconfig(tmp_path / "config")))
    assert [p["metadata"]["name"] for p in state.pod_groups] == ["pg"]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_context_selects_cluster_and_namespace(server, tmp_path):
    config = server.kubeconfig(context="good", namespace="ml")
    broken = copy.deepcopy(config["clusters"][0])
    broken["name"] = "broken"
    broken["cluster"]["server"] = f"https://127.0.0.1:{_closed_port()}"
    config["clusters"].append(broken)
    config["contexts"].append({"name": "bad", "context": {"cluster": "broken", "user": "fake", "namespace": "x"}})
    config["current-context"] = "bad"
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ClusterAccessError) as err:
        load_live_state(kubeconfig=str(path), timeout=2)
    assert "cannot connect" in err.value.message
    state = load_live_state(kubeconfig=str(path), context="good")
    assert len(state.nodes) == 5
    assert kubeconfig_namespace(str(path)) == "x"
    assert kubeconfig_namespace(str(path), context="good") == "ml"
    with pytest.raises(ClusterAccessError) as err:
        load_live_state(kubeconfig=str(path), context="missing")
    assert "missing" in err.value.message


def test_kubeconfig_from_environment(server, kubeconfig, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", kubeconfig)
    assert len(load_live_state().nodes) == 5
    assert kubeconfig_namespace() == "team-a"


def test_missing_kubeconfig_file(tmp_path):
    with pytest.raises(ClusterAccessError) as err:
        load_live_state(kubeconfig=str(tmp_path / "nope"))
    assert "no such file" in err.value.message


def test_no_kubeconfig_and_not_in_cluster(monkeypatch, tmp_path):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ClusterAccessError) as err:
        load_live_state()
    assert "no cluster to read" in err.value.message
    assert kubeconfig_namespace() is None


def test_in_cluster_config(server, monkeypatch, tmp_path):
    from kubernetes.config import incluster_config

    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("s3cret")
    (sa / "ca.crt").write_bytes(server.ca_pem)
    (sa / "namespace").write_text("kube-dra\n")
    port = server.url.rsplit(":", 1)[1]
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)
    monkeypatch.setattr(live, "SERVICE_ACCOUNT_DIR", sa)
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(sa / "token"))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(sa / "ca.crt"))
    state = load_live_state()
    assert len(state.nodes) == 5
    assert kubeconfig_namespace() == "kube-dra"


class _TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_only_for_multi_page_lists_on_a_terminal(server, kubeconfig, monkeypatch):
    fake = _TTY()
    monkeypatch.setattr(sys, "stderr", fake)
    load_live_state(kubeconfig=kubeconfig)
    assert "reading cluster:" in fake.getvalue() and "nodes" in fake.getvalue()
    assert fake.getvalue().endswith("\r\x1b[K")  # the line is cleared at the end
    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stderr", quiet)
    load_live_state(kubeconfig=kubeconfig)
    assert quiet.getvalue() == ""


def test_cli_reads_the_live_cluster(server, kubeconfig, cli_runner):
    from kubectl_dra.cli.main import cli

    result = cli_runner.invoke(cli, ["usage", "--kubeconfig", kubeconfig, "-o", "json"])
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(result.output)
    assert doc["cluster"]["devices"] == {"total": 5, "allocated": 0, "free": 5, "shared": 0, "adminAccess": 0,
                                         "unavailable": {}}


def test_cli_access_error_exits_2(server, kubeconfig, cli_runner):
    from kubectl_dra.cli.main import cli

    server.fail("/api/v1/nodes", 403, "nodes is forbidden")
    result = cli_runner.invoke(cli, ["usage", "--kubeconfig", kubeconfig])
    assert result.exit_code == 2
    assert "forbidden (403)" in result.output and "Traceback" not in result.output


def test_fake_server_get_and_namespaced_list(server):
    status, body, _ = server.handle("/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims", {},
                                    "Bearer s3cret")
    assert status == 200 and [i["metadata"]["name"] for i in body["items"]] == ["c-1"]
    status, body, _ = server.handle("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c-0", {},
                                    "Bearer s3cret")
    assert status == 200 and body["kind"] == "ResourceClaim"
    status, _, _ = server.handle("/api/v1/nodes/nope", {}, "Bearer s3cret")
    assert status == 404


@pytest.mark.slow
def test_plugin_discovery_through_kubectl(tmp_path):
    import shutil
    import subprocess

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed; the plugin test needs it")
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "kubectl-dra").exists():
        pytest.skip("the kubectl-dra executable is not installed beside this python (pip install -e .)")
    env = {"PATH": f"{bin_dir}:{Path(kubectl).parent}", "HOME": str(tmp_path)}
    plugins = subprocess.run([kubectl, "plugin", "list"], capture_output=True, text=True, env=env, timeout=60)
    assert "kubectl-dra" in plugins.stdout
    result = subprocess.run([kubectl, "dra", "--help"], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    for command in ("preview", "explain", "usage", "validate", "metadata"):
        assert command in result.stdout


@pytest.mark.slow
def test_kubectl_dra_usage_against_fake_cluster(server, kubeconfig, tmp_path):
    import shutil
    import subprocess

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed; the plugin test needs it")
    bin_dir = Path(sys.executable).parent
    env = {"PATH": f"{bin_dir}:{Path(kubectl).parent}", "HOME": str(tmp_path)}
    result = subprocess.run([kubectl, "dra", "usage", "--kubeconfig", kubeconfig, "--no-headers"],
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:7] == ["*", "*", "*", "5", "0", "(0%)", "5"]
    assert len(lines) == 6


def test_explain_reads_the_live_cluster_once(server, kubeconfig, cli_runner):
    """explain and preview work from one snapshot: every list is read once per command."""
    from kubectl_dra.cli.main import cli

    server.add({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "tpu"},
                "spec": {"selectors": [{"cel": {"expression": 'device.driver == "tpu.example.com"'}}]}})
    server.add({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": "wants-tpu", "namespace": "team-a"},
                "spec": {"devices": {"requests": [{"name": "tpu", "exactly": {"deviceClassName": "tpu"}}]}}})
    server.requests.clear()
    result = cli_runner.invoke(cli, ["explain", "wants-tpu", "--kubeconfig", kubeconfig, "-o", "yaml"])
    assert result.exit_code == 1, result.output
    doc = yaml.safe_load(result.stdout)
    assert doc["summary"] == ("ResourceClaim team-a/wants-tpu: 0/5 nodes fit: 5 no tpu device "
                              "(no device of class tpu exists in the cluster)")  # namespace from the kubeconfig
    first_pages = [r.path for r in server.requests if r.path.endswith("s") and "continue" not in r.query]
    assert len(first_pages) == len(set(first_pages))


def test_kubeconfig_list_in_environment(server, kubeconfig, monkeypatch, tmp_path):
    """$KUBECONFIG may name several files, some missing, as kubectl allows."""
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}:{kubeconfig}")
    assert len(load_live_state().nodes) == 5
    assert kubeconfig_namespace() == "team-a"


def test_cli_context_flag(server, tmp_path, cli_runner):
    from kubectl_dra.cli.main import cli

    path = server.write_kubeconfig(tmp_path / "config", context="main", extra_contexts={"other": "ml"})
    result = cli_runner.invoke(cli, ["usage", "--kubeconfig", str(path), "--context", "other", "--no-headers"])
    assert result.exit_code == 0, result.output
    result = cli_runner.invoke(cli, ["usage", "--kubeconfig", str(path), "--context", "nope"])
    assert result.exit_code == 2 and "nope" in result.output


def test_retry_after_is_honoured(server, kubeconfig):
    server.fail("/api/v1/nodes", 429, "too many requests", times=2, retry_after="0")
    state = load_live_state(kubeconfig=kubeconfig)
    assert len(state.nodes) == 5
    assert len([r for r in server.list_requests("/api/v1/nodes") if "continue" not in r.query]) == 3


def test_throttled_for_good_is_an_error(server, kubeconfig):
    server.fail("/api/v1/nodes", 429, "too many requests", retry_after="0")
    with pytest.raises(ClusterAccessError) as err:
        load_live_state(kubeconfig=kubeconfig)
    assert "(429)" in err.value.message
    assert len(server.list_requests("/api/v1/nodes")) == live.RETRY_AFTER_ATTEMPTS
