"""Unknown fields (strict field validation) with the kubernetes-validate schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubectl_dra.cli.main import cli
from kubectl_dra.validation import unknown_fields as uf

CLAIM = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "default", "lables": {"a": "b"}},
    "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "conut": 2}}]}},
}


def test_typos_are_found_with_their_paths() -> None:
    assert uf.available()
    assert uf.unknown_fields(CLAIM, "1.37") == ["metadata.lables", "spec.devices.requests[0].exactly.conut"]


def test_known_fields_and_other_versions() -> None:
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
              "spec": {"driver": "d", "allNodes": True, "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                       "devices": [{"name": "a", "attributes": {"m": {"string": "x"}},
                                    "capacity": {"mem": {"value": "1Gi"}}}]}}
    assert uf.unknown_fields(slice_, "1.37") == []
    beta = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "d", "allNodes": True, "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "a", "basic": {"atributes": {}}}]}}
    assert uf.unknown_fields(beta, "1.34") == ["spec.devices[0].basic.atributes"]
    assert uf.unknown_fields({"apiVersion": "example.com/v1", "kind": "Thing"}, "1.37") is None


def write(tmp_path: Path, *docs: dict) -> str:
    path = tmp_path / "objs.yaml"
    path.write_text(yaml.safe_dump_all(list(docs)))
    return str(path)


def test_validate_warns_by_default_and_fails_on_request(tmp_path: Path) -> None:
    path = write(tmp_path, CLAIM)
    warned = CliRunner().invoke(cli, ["validate", "-f", path])
    assert warned.exit_code == 0
    assert warned.stdout == "ResourceClaim/c: ok\n"
    assert 'warning: ResourceClaim/c: unknown field "spec.devices.requests[0].exactly.conut"' in warned.stderr
    decision = json.loads(CliRunner().invoke(cli, ["validate", "-f", path, "-o", "json"]).stdout)
    assert decision["warnings"] == ['unknown field "metadata.lables"',
                                    'unknown field "spec.devices.requests[0].exactly.conut"']
    failed = CliRunner().invoke(cli, ["validate", "-f", path, "--unknown-fields", "error"])
    assert failed.exit_code == 1
    assert failed.stdout.splitlines() == ["ResourceClaim/c: metadata.lables: Unknown field",
                                          "ResourceClaim/c: spec.devices.requests[0].exactly.conut: Unknown field"]
    ignored = CliRunner().invoke(cli, ["validate", "-f", path, "--unknown-fields", "ignore"])
    assert ignored.exit_code == 0 and "unknown field" not in ignored.stderr


def test_error_mode_without_the_package_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(uf, "available", lambda: False)
    result = CliRunner().invoke(cli, ["validate", "-f", write(tmp_path, CLAIM), "--unknown-fields", "error"])
    assert result.exit_code == 2
    assert "needs the kubernetes-validate package" in result.stderr


def test_warn_mode_without_the_package_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the schemas, the default (warn) says once that nothing was checked and what to
    install, instead of reporting no unknown field; ignore stays silent."""
    monkeypatch.setattr(uf, "available", lambda: False)
    warned = CliRunner().invoke(cli, ["validate", "-f", write(tmp_path, CLAIM)])
    assert warned.exit_code == 0
    assert warned.stderr.count("pip install kubernetes-validate") == 1
    assert "unknown fields are not checked" in warned.stderr
    ignored = CliRunner().invoke(cli, ["validate", "-f", write(tmp_path, CLAIM), "--unknown-fields", "ignore"])
    assert ignored.exit_code == 0 and "kubernetes-validate" not in ignored.stderr
