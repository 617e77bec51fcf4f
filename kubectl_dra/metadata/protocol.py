"""Layout and decoding of device metadata files, as kubelet plugins write them.

A file is a stream of JSON objects, the same ``DeviceMetadata`` once per API version,
newest first. A consumer takes the first object whose version it knows and skips
versions it does not know, so that a driver upgrade never breaks older readers.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from ..types import Obj
from ..errors import MetadataError

CONTAINER_DIR = "/var/run/kubernetes.io/dra-device-attributes"
RESOURCE_CLAIMS_SUBDIR = "resourceclaims"
RESOURCE_CLAIM_TEMPLATES_SUBDIR = "resourceclaimtemplates"
FILE_SUFFIX = "-metadata.json"
GROUP = "metadata.resource.k8s.io"
KIND = "DeviceMetadata"
#: the versions this reader decodes, newest first (both share one schema)
KNOWN_VERSIONS: tuple[str, ...] = (f"{GROUP}/v1beta1", f"{GROUP}/v1alpha1")



def base_request(request_ref: str) -> str:
    """``gpu`` for ``gpu/high-memory``: paths use the top-level request name only."""
    return request_ref.split("/", 1)[0]


def claim_file_path(driver: str, claim: str, request: str) -> str:
    """In-container path of a directly referenced claim's metadata file."""
    return posixpath.join(CONTAINER_DIR, RESOURCE_CLAIMS_SUBDIR, claim, base_request(request), driver + FILE_SUFFIX)


def template_file_path(driver: str, pod_claim_name: str, request: str) -> str:
    """In-container path for a claim generated from a template (keyed by the pod-local name)."""
    return posixpath.join(
        CONTAINER_DIR, RESOURCE_CLAIM_TEMPLATES_SUBDIR, pod_claim_name, base_request(request), driver + FILE_SUFFIX
    )


@dataclass(frozen=True)
class MetadataLocation:
    """What a file's path says: which subdirectory, claim (or pod claim name), request, driver."""

    path: str
    subdir: str | None = None
    claim: str | None = None
    request: str | None = None
    driver: str | None = None
    #: why the path does not follow the layout, or None when it does
    problem: str | None = None

    @property
    def from_template(self) -> bool:
        return self.subdir == RESOURCE_CLAIM_TEMPLATES_SUBDIR


def parse_location(path: str) -> MetadataLocation:
    """Read claim/request/driver from a path relative to (or under) the metadata directory."""
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    name = parts[-1] if parts else ""
    driver = name[: -len(FILE_SUFFIX)] if name.endswith(FILE_SUFFIX) and len(name) > len(FILE_SUFFIX) else None
    subdir_index = None
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in (RESOURCE_CLAIMS_SUBDIR, RESOURCE_CLAIM_TEMPLATES_SUBDIR):
            subdir_index = i
            break
    if driver is None:
        return MetadataLocation(path, driver=None, problem=f"file name {name!r} is not <driver>{FILE_SUFFIX}")
    if subdir_index is None:
        return MetadataLocation(
            path, driver=driver,
            problem=f"path is not under {RESOURCE_CLAIMS_SUBDIR}/ or {RESOURCE_CLAIM_TEMPLATES_SUBDIR}/",
        )
    rest = parts[subdir_index + 1:]
    if len(rest) != 3:
        return MetadataLocation(
            path, subdir=parts[subdir_index], driver=driver,
            problem=f"expected {parts[subdir_index]}/<claim>/<request>/<driver>{FILE_SUFFIX}, "
            f"found {len(rest) - 1} directory level(s) below {parts[subdir_index]}/",
        )
    return MetadataLocation(path, subdir=parts[subdir_index], claim=rest[0], request=rest[1], driver=driver)


@dataclass
class DecodedStream:
    """The result of reading one metadata file."""

    #: the object a consumer uses (the first of a known version)
    object: Obj
    api_version: str
    #: every JSON value in the stream, in order
    objects: list[Any] = field(default_factory=list)
    #: versions skipped before the chosen one because they are unknown
    skipped_versions: list[str] = field(default_factory=list)


def split_stream(text: str, origin: str) -> list[Any]:
    """All JSON values of a concatenated JSON stream (whitespace between them is optional)."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in " \t\r\n":
            pos += 1
        if pos >= end:
            return values
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise MetadataError(
                f"{origin}: read metadata object from stream: {exc.msg} at line {exc.lineno} column {exc.colno}"
            ) from None
        values.append(value)


def _group_version(value: Any) -> tuple[str, str, str]:
    """(apiVersion, group, version) of a stream value; empty strings when absent."""
    if not isinstance(value, dict):
        return "", "", ""
    api_version = value.get("apiVersion")
    if not isinstance(api_version, str) or not api_version:
        return "", "", ""
    group, _, version = api_version.rpartition("/")
    return api_version, group, version


def decode_stream(text: str, origin: str = "<stream>") -> DecodedStream:
    """Decode a metadata file the way upstream consumers do; :class:`MetadataError` when
    there is no object, only unknown versions, malformed JSON, or a bad known object."""
    values = split_stream(text, origin)
    skipped: list[str] = []
    for value in values:
        api_version, group, version = _group_version(value)
        if not version:
            what = "Object 'apiVersion' is missing" if isinstance(value, dict) else "not a JSON object"
            raise MetadataError(f"{origin}: decode metadata object: {what}")
        if api_version not in KNOWN_VERSIONS:
            skipped.append(api_version)
            continue
        kind = value.get("kind")
        if not kind:
            raise MetadataError(f"{origin}: decode {api_version}: Object 'Kind' is missing")
        if kind != KIND:
            raise MetadataError(f"{origin}: decode {api_version}: no kind {kind!r} is registered for version {api_version!r}")
        problems = schema_problems(value)
        if problems:
            raise MetadataError(f"{origin}: decode {api_version}: {problems[0]}")
        return DecodedStream(object=value, api_version=api_version, objects=values, skipped_versions=skipped)
    if not skipped:
        raise MetadataError(f"{origin}: no metadata objects found in stream")
    raise MetadataError(
        f"{origin}: no compatible metadata version found in stream (unknown versions: {', '.join(skipped)})"
    )


_TYPES: dict[str, tuple[type, ...]] = {"int": (int,), "bool": (bool,), "string": (str,), "version": (str,)}
_LIST_TYPES: dict[str, tuple[type, ...]] = {"ints": (int,), "bools": (bool,), "strings": (str,), "versions": (str,)}


def _attribute_problem(path: str, attr: Any) -> str | None:
    if not isinstance(attr, dict):
        return f"{path}: expected an object"
    for key, value in attr.items():
        if key in _TYPES:
            ok = isinstance(value, _TYPES[key]) and not (key == "int" and isinstance(value, bool))
        elif key in _LIST_TYPES:
            ok = isinstance(value, list) and all(
                isinstance(v, _LIST_TYPES[key]) and not (key == "ints" and isinstance(v, bool)) for v in value
            )
        else:
            continue  # unknown fields are dropped by a lenient decoder, as upstream's is
        if not ok:
            return f"{path}.{key}: wrong type {type(value).__name__}"
    return None


def schema_problems(obj: Obj) -> list[str]:
    """Type errors that make a known-version object undecodable (wrong JSON types)."""
    problems: list[str] = []
    meta = obj.get("metadata", {})
    if not isinstance(meta, dict):
        return ["metadata: expected an object"]
    generation = meta.get("generation")
    if generation is not None and (not isinstance(generation, int) or isinstance(generation, bool)):
        problems.append("metadata.generation: expected an integer")
    pcn = obj.get("podClaimName")
    if pcn is not None and not isinstance(pcn, str):
        problems.append("podClaimName: expected a string")
    requests = obj.get("requests", [])
    if requests is None:
        requests = []
    if not isinstance(requests, list):
        return problems + ["requests: expected a list"]
    for i, req in enumerate(requests):
        if not isinstance(req, dict):
            problems.append(f"requests[{i}]: expected an object")
            continue
        if not isinstance(req.get("name", ""), str):
            problems.append(f"requests[{i}].name: expected a string")
        devices = req.get("devices") or []
        if not isinstance(devices, list):
            problems.append(f"requests[{i}].devices: expected a list")
            continue
        for j, dev in enumerate(devices):
            where = f"requests[{i}].devices[{j}]"
            if not isinstance(dev, dict):
                problems.append(f"{where}: expected an object")
                continue
            for key in ("driver", "pool", "name"):
                if not isinstance(dev.get(key, ""), str):
                    problems.append(f"{where}.{key}: expected a string")
            attrs = dev.get("attributes") or {}
            if not isinstance(attrs, dict):
                problems.append(f"{where}.attributes: expected an object")
                continue
            for name, attr in attrs.items():
                problem = _attribute_problem(f"{where}.attributes[{name}]", attr)
                if problem:
                    problems.append(problem)
    return problems


def requests_of(obj: Obj) -> list[Obj]:
    return [r for r in (obj.get("requests") or []) if isinstance(r, dict)]


def merge_requests(objects: list[Obj]) -> Obj:
    """Merge several drivers' objects of one request directory, as upstream's reader does:
    requests of the same name get their device lists concatenated; podClaimName is the
    first one set."""
    merged: Obj = {"requests": []}
    index: dict[str, int] = {}
    for obj in objects:
        if "podClaimName" not in merged and obj.get("podClaimName") is not None:
            merged["podClaimName"] = obj["podClaimName"]
        for req in requests_of(obj):
            name = req.get("name", "")
            if name in index:
                merged["requests"][index[name]]["devices"].extend(req.get("devices") or [])
            else:
                index[name] = len(merged["requests"])
                merged["requests"].append({"name": name, "devices": list(req.get("devices") or [])})
    return merged


_VERSION_RE = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?\Z")


def version_priority(api_version: str) -> tuple[int, int, int]:
    """Sort key for Kubernetes' version order, larger is preferred: GA versions before beta
    before alpha, then by major and minor number (v2 > v1 > v2beta1 > v1beta2 > v1alpha1);
    names that are not Kubernetes versions sort last."""
    version = api_version.rpartition("/")[2]
    m = _VERSION_RE.match(version)
    if not m:
        return (0, 0, 0)
    stage_rank = {"alpha": 1, "beta": 2, None: 3}[m.group(2)]
    return (stage_rank, int(m.group(1)), int(m.group(3) or 0))
