"""``validate`` refuses objects whose apiVersion the API server does not serve for their kind,
before any field is checked (issue 23): missing, numeric, malformed, unknown, or a version
that no longer serves the kind (resource.k8s.io/v1alpha3 has only DeviceTaintRule)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_dra.cli.main import cli

CLAIM = {"kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}


def _validate(tmp_path: Path, cli_runner: Any, obj: dict, *args: str) -> Any:
    path = tmp_path / "obj.yaml"
    path.write_text(yaml.safe_dump(obj))
    return cli_runner.invoke(cli, ["validate", "-f", str(path), *args])


@pytest.mark.parametrize("version, words", [
    (None, "apiVersion: Required value"),
    (7, "apiVersion: Invalid value: 7"),
    ("resource.k8s.io/v2", 'not served: no matches for kind "ResourceClaim" in version "resource.k8s.io/v2"'),
    ("a/b/c", "unexpected GroupVersion string: a/b/c"),
    ("resource.k8s.io/v1alpha3", 'no matches for kind "ResourceClaim" in version "resource.k8s.io/v1alpha3"'),
    ("v1", 'no matches for kind "ResourceClaim" in version "v1"'),
])
def test_unserved_api_versions_are_refused(tmp_path: Path, cli_runner: Any, version: Any, words: str) -> None:
    obj = dict(CLAIM) if version is None else {"apiVersion": version, **CLAIM}
    result = _validate(tmp_path, cli_runner, obj)
    assert result.exit_code == 1, result.output
    (line,) = result.stdout.splitlines()
    assert line.startswith("ResourceClaim/c: apiVersion: ") and words in line
    doc = json.loads(_validate(tmp_path, cli_runner, obj, "-o", "json").stdout)
    assert doc["allowed"] is False and [e["field"] for e in doc["errors"]] == ["apiVersion"]
    assert doc["patch"] == []


def test_a_v1alpha3_claim_gets_no_v1_field_errors(tmp_path: Path, cli_runner: Any) -> None:
    """A v1alpha3 claim written the old way (fields on the request) is not served: one error,
    on apiVersion, not v1 errors about ``exactly``."""
    old = {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceClaim", "metadata": {"name": "c"},
           "spec": {"devices": {"requests": [{"name": "r", "deviceClassName": "gpu"}]}}}
    doc = json.loads(_validate(tmp_path, cli_runner, old, "-o", "json").stdout)
    assert [e["field"] for e in doc["errors"]] == ["apiVersion"]
    assert "not served" in doc["errors"][0]["message"]


@pytest.mark.parametrize("version", ["resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1"])
@pytest.mark.parametrize("release", ["1.34", "1.35", "1.36", "1.37"])
def test_served_versions_are_validated(tmp_path: Path, cli_runner: Any, version: str, release: str) -> None:
    obj = {"apiVersion": version, **CLAIM}
    if version.endswith("v1beta1"):  # v1beta1 keeps the request's fields on the request
        obj = {**obj, "spec": {"devices": {"requests": [{"name": "r", "deviceClassName": "gpu"}]}}}
    result = _validate(tmp_path, cli_runner, obj, "--kubernetes-version", release)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "ResourceClaim/c: ok"


def test_core_and_unchecked_kinds(tmp_path: Path, cli_runner: Any) -> None:
    """A Pod must be core v1; kinds validate does not check are left alone, whatever their version."""
    pod = {"apiVersion": "apps/v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "x"}]}}
    result = _validate(tmp_path, cli_runner, pod)
    assert result.exit_code == 1 and 'no matches for kind "Pod" in version "apps/v1"' in result.stdout
    assert _validate(tmp_path, cli_runner, {**pod, "apiVersion": "v1"}).exit_code == 0
    other = {"apiVersion": "example.com/v9", "kind": "Widget", "metadata": {"name": "w"}}
    assert _validate(tmp_path, cli_runner, other).exit_code == 0
