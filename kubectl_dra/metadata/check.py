"""Protocol checks for one metadata file: each :class:`Violation` names the file, the
rule broken, what was found and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import MetadataError
from .protocol import (
    FILE_SUFFIX,
    KNOWN_VERSIONS,
    RESOURCE_CLAIM_TEMPLATES_SUBDIR,
    RESOURCE_CLAIMS_SUBDIR,
    DecodedStream,
    decode_stream,
    parse_location,
    requests_of,
    version_priority,
)

#: rule id -> one-line description (shown by ``kubectl dra metadata --help`` and docs)
RULES: dict[str, str] = {
    "file-name": f"the file is named <driver>{FILE_SUFFIX}",
    "layout": f"the file lies at {RESOURCE_CLAIMS_SUBDIR}/<claim>/<request>/ or "
    f"{RESOURCE_CLAIM_TEMPLATES_SUBDIR}/<podClaimName>/<request>/",
    "undecodable": "the stream holds an object of a version consumers know",
    "version-order": "versions are written newest first",
    "disagree": "the objects of one stream carry the same data",
    "driver": "every device's driver is the driver in the file name",
    "generation": "metadata.generation is set and positive",
    "request-name": "request names are the directory's request or <request>/<subrequest>",
    "claim-name": "metadata.name (claims) or podClaimName (templates) matches the directory",
    "fields": "field values follow the API's rules (names, pools, ≤32 attributes with one value each, "
    "network data)",
}

#: at most this many attributes per device (the API type's maxProperties)
MAX_ATTRIBUTES = 32


@dataclass(frozen=True)
class Violation:
    """One broken rule in one file."""

    file: str
    rule: str
    message: str
    hint: str

    def __str__(self) -> str:
        return f"{self.file}: {self.rule}: {self.message} (fix: {self.hint})"

    def to_dict(self) -> dict[str, str]:
        return {"file": self.file, "rule": self.rule, "message": self.message, "hint": self.hint}


def _strip_type(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    return obj


def _stream_violations(path: str, decoded: DecodedStream) -> list[Violation]:
    out: list[Violation] = []
    versions = [o["apiVersion"] for o in decoded.objects if isinstance(o, dict) and o.get("apiVersion")]
    for earlier, later in zip(versions, versions[1:]):
        if version_priority(later) > version_priority(earlier):
            out.append(Violation(
                path, "version-order", f"{later} comes after the older {earlier}",
                "write the newest version first so that new consumers pick it",
            ))
            break
    known = [o for o in decoded.objects if isinstance(o, dict) and o.get("apiVersion") in KNOWN_VERSIONS]
    first = _strip_type(known[0]) if known else None
    for other in known[1:]:
        if _strip_type(other) != first:
            out.append(Violation(
                path, "disagree", f"{known[0].get('apiVersion')} and {other.get('apiVersion')} carry different data",
                "encode the same DeviceMetadata once per version",
            ))
            break
    return out


def _content_violations(path: str, obj: dict[str, Any], location: Any) -> list[Violation]:
    out: list[Violation] = []
    generation = (obj.get("metadata") or {}).get("generation")
    if generation is None:
        out.append(Violation(path, "generation", "metadata.generation is missing",
                             "set it to 1 when first written and increment it on every rewrite"))
    elif not isinstance(generation, int) or isinstance(generation, bool) or generation <= 0:
        out.append(Violation(path, "generation", f"metadata.generation is {generation!r}, not a positive integer",
                             "set it to 1 when first written and increment it on every rewrite"))
    for i, req in enumerate(requests_of(obj)):
        name = req.get("name") or ""
        if location.request and name != location.request and not name.startswith(location.request + "/"):
            out.append(Violation(
                path, "request-name", f"requests[{i}].name {name!r} does not belong to request directory "
                f"{location.request!r}", f"write it as {location.request!r} or '{location.request}/<subrequest>'",
            ))
        for j, dev in enumerate(req.get("devices") or []):
            driver = dev.get("driver") if isinstance(dev, dict) else None
            if location.driver and driver != location.driver:
                out.append(Violation(
                    path, "driver", f"requests[{i}].devices[{j}].driver is {driver!r} but the file belongs to "
                    f"driver {location.driver!r}", "each driver writes only its own devices into its own file",
                ))
    if location.subdir == RESOURCE_CLAIMS_SUBDIR and location.claim:
        name = (obj.get("metadata") or {}).get("name")
        if name != location.claim:
            out.append(Violation(path, "claim-name", f"metadata.name is {name!r}, directory says {location.claim!r}",
                                 "the directory of a directly referenced claim is the ResourceClaim's name"))
    if location.subdir == RESOURCE_CLAIM_TEMPLATES_SUBDIR and location.claim:
        pcn = obj.get("podClaimName")
        if pcn != location.claim:
            out.append(Violation(
                path, "claim-name", f"podClaimName is {pcn!r}, directory says {location.claim!r}",
                "claims from templates are keyed by pod.spec.resourceClaims[].name; record it in podClaimName",
            ))
    return out


def _field_violations(path: str, obj: dict[str, Any]) -> list[Violation]:
    """The declarative rules of the DeviceMetadata type (v1beta1), with the API server's own
    checks for the shared parts (driver, pool and device names, attributes, network data)."""
    # validation stands below metadata (it never imports it): a file is held to the same rules
    # as the API server holds the ResourceSlice and the claim status it came from, by the same code
    from ..validation import names
    from ..validation.deviceattributes import validate_device_attribute
    from ..validation.devicestatus import validate_network_data
    from ..validation.field import Path, required, too_many

    errors = []
    pcn = obj.get("podClaimName")
    if pcn is not None:
        errors += names.validate_dns_label(pcn, Path.root("podClaimName"))
    for i, req in enumerate(requests_of(obj)):
        rpath = Path.root("requests").index(i)
        if not req.get("name"):
            errors.append(required(rpath.child("name"), ""))
        for j, dev in enumerate(req.get("devices") or []):
            if not isinstance(dev, dict):
                continue
            dpath = rpath.child("devices").index(j)
            errors += names.validate_driver_name(dev.get("driver"), dpath.child("driver"))
            errors += names.validate_pool_name(dev.get("pool"), dpath.child("pool"))
            if not dev.get("name"):
                errors.append(required(dpath.child("name"), ""))
            else:
                errors += names.validate_device_name(dev.get("name"), dpath.child("name"))
            attrs = dev.get("attributes") or {}
            if len(attrs) > MAX_ATTRIBUTES:
                errors.append(too_many(dpath.child("attributes"), len(attrs), MAX_ATTRIBUTES))
            for key, attr in sorted(attrs.items()):
                apath = dpath.child("attributes").key(str(key))
                errors += names.validate_qualified_name(key, apath)
                errors += validate_device_attribute(attr, apath)
            if isinstance(dev.get("networkData"), dict):
                errors += validate_network_data(dev["networkData"], dpath.child("networkData"))
    return [Violation(path, "fields", str(e), "write values the DeviceMetadata API accepts; consumers may reject others") for e in errors]


def check_file(path: str, text: str) -> tuple[DecodedStream | None, list[Violation]]:
    """Decode one file and list every protocol violation in it."""
    location = parse_location(path)
    violations: list[Violation] = []
    if location.problem:
        rule = "file-name" if location.driver is None else "layout"
        violations.append(Violation(path, rule, location.problem, RULES[rule]))
    try:
        decoded = decode_stream(text, path)
    except MetadataError as exc:
        message = str(exc)
        if message.startswith(path + ": "):
            message = message[len(path) + 2:]
        violations.append(Violation(path, "undecodable", message,
                                    f"write at least one object of {' or '.join(KNOWN_VERSIONS)}"))
        return None, violations
    violations.extend(_stream_violations(path, decoded))
    violations.extend(_content_violations(path, decoded.object, location))
    violations.extend(_field_violations(path, decoded.object))
    return decoded, violations
