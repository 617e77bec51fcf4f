"""What a claim's metadata files should say, from its allocation and the ResourceSlices,
and how that differs from what a container holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

import posixpath

from ..types import Obj
from .protocol import (
    CONTAINER_DIR,
    RESOURCE_CLAIM_TEMPLATES_SUBDIR,
    RESOURCE_CLAIMS_SUBDIR,
    DecodedStream,
    base_request,
    claim_file_path,
    requests_of,
    template_file_path,
)

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"



@dataclass
class ExpectedFile:
    """One driver's file for one request of a claim."""

    path: str
    driver: str
    request: str
    #: request reference (``req`` or ``req/sub``) -> devices as metadata writes them
    devices: dict[str, list[Obj]] = field(default_factory=dict)


@dataclass(frozen=True)
class Difference:
    """One disagreement between expectation and the container; ``severity`` is ``error``
    (the metadata is wrong) or ``note`` (allowed, but worth knowing)."""

    path: str
    kind: str
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        return f"{self.path}: {self.kind}: {self.message}"

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "kind": self.kind, "severity": self.severity, "message": self.message}


def _slice_devices(slices: Iterable[Obj]) -> dict[tuple[str, str, str], Obj]:
    """(driver, pool, device) -> device of the newest pool generation."""
    best: dict[tuple[str, str, str], tuple[int, Obj]] = {}
    for s in slices:
        spec = s.get("spec") or {}
        pool = spec.get("pool") or {}
        generation = int(pool.get("generation") or 0)
        for dev in spec.get("devices") or []:
            key = (spec.get("driver", ""), pool.get("name", ""), dev.get("name", ""))
            if key not in best or generation > best[key][0]:
                best[key] = (generation, dev)
    return {k: v[1] for k, v in best.items()}


def qualify(name: str, driver: str) -> str:
    """Attribute names without a domain belong to the driver's domain."""
    return name if "/" in name else f"{driver}/{name}"


def claim_directory(claim: Obj) -> str:
    """The in-container directory holding all of a claim's metadata files."""
    meta = claim.get("metadata") or {}
    pod_claim_name = (meta.get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION)
    if pod_claim_name:
        return posixpath.join(CONTAINER_DIR, RESOURCE_CLAIM_TEMPLATES_SUBDIR, pod_claim_name)
    return posixpath.join(CONTAINER_DIR, RESOURCE_CLAIMS_SUBDIR, meta.get("name", ""))


def expected_files(claim: Obj, slices: Iterable[Obj]) -> list[ExpectedFile]:
    """The files the drivers should write for an allocated claim (empty when not allocated)."""
    meta = claim.get("metadata") or {}
    pod_claim_name = (meta.get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION)
    results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
    devices = _slice_devices(slices)
    files: dict[tuple[str, str], ExpectedFile] = {}
    for result in results:
        driver, request_ref = result.get("driver", ""), result.get("request", "")
        request = base_request(request_ref)
        path = (template_file_path(driver, pod_claim_name, request) if pod_claim_name
                else claim_file_path(driver, meta.get("name", ""), request))
        ef = files.setdefault((request, driver), ExpectedFile(path=path, driver=driver, request=request))
        slice_device = devices.get((driver, result.get("pool", ""), result.get("device", ""))) or {}
        ef.devices.setdefault(request_ref, []).append({
            "driver": driver, "pool": result.get("pool", ""), "name": result.get("device", ""),
            "attributes": dict(slice_device.get("attributes") or {}),
        })
    return list(files.values())


def _device_key(dev: Obj) -> tuple[str, str, str]:
    return (dev.get("driver", ""), dev.get("pool", ""), dev.get("name", ""))


def _compare_attributes(path: str, want: Obj, have: Obj) -> list[Difference]:
    out: list[Difference] = []
    driver = want.get("driver", "")
    want_attrs = {qualify(k, driver): v for k, v in (want.get("attributes") or {}).items()}
    have_attrs = {qualify(k, driver): v for k, v in (have.get("attributes") or {}).items()}
    ident = f"{want['pool']}/{want['name']}"
    for name, value in sorted(want_attrs.items()):
        if name not in have_attrs:
            out.append(Difference(path, "attribute-missing",
                                  f"device {ident}: attribute {name} from the ResourceSlice is not published",
                                  severity="note"))
        elif have_attrs[name] != value:
            out.append(Difference(path, "attribute-differs",
                                  f"device {ident}: attribute {name} is {have_attrs[name]} in the file, "
                                  f"{value} in the ResourceSlice"))
    return out


def _compare_file(expected: ExpectedFile, decoded: DecodedStream) -> list[Difference]:
    out: list[Difference] = []
    have: dict[str, list[Obj]] = {}
    for req in requests_of(decoded.object):
        have.setdefault(req.get("name", ""), []).extend(d for d in (req.get("devices") or []) if isinstance(d, dict))
    for ref in sorted(set(expected.devices) | set(have)):
        want_devs = {_device_key(d): d for d in expected.devices.get(ref, [])}
        have_devs = {_device_key(d): d for d in have.get(ref, [])}
        for key in sorted(set(want_devs) - set(have_devs)):
            out.append(Difference(expected.path, "missing-device",
                                  f"request {ref}: allocated device {key[1]}/{key[2]} is not in the file"))
        for key in sorted(set(have_devs) - set(want_devs)):
            out.append(Difference(expected.path, "unexpected-device",
                                  f"request {ref}: device {key[1]}/{key[2]} is not allocated to it"))
        for key in sorted(set(want_devs) & set(have_devs)):
            out.extend(_compare_attributes(expected.path, want_devs[key], have_devs[key]))
    return out


def compare_expected(expected: list[ExpectedFile], actual: Mapping[str, DecodedStream | str],
                     directory: str | None = None) -> list[Difference]:
    """Differences between the expected files and what was read; ``actual`` maps absolute
    in-container paths to decoded streams, or to an error message for undecodable files.
    Files under ``directory`` (the claim's) that nobody expects are reported too."""
    out: list[Difference] = []
    wanted = {ef.path for ef in expected}
    if directory:
        prefix = directory.rstrip("/") + "/"
        for path in sorted(actual):
            if path.startswith(prefix) and path not in wanted:
                out.append(Difference(path, "unexpected-file",
                                      "no device of this driver is allocated to this request"))
    for ef in expected:
        found = actual.get(ef.path)
        if found is None:
            out.append(Difference(ef.path, "missing-file", f"driver {ef.driver} wrote no metadata for request {ef.request}"))
        elif isinstance(found, str):
            out.append(Difference(ef.path, "undecodable", found))
        else:
            out.extend(_compare_file(ef, found))
    return out
