"""Builders for device metadata files and trees, as kubelet plugins write them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

V1BETA1 = "metadata.resource.k8s.io/v1beta1"
V1ALPHA1 = "metadata.resource.k8s.io/v1alpha1"


def device(name: str, driver: str = "gpu.example.com", pool: str = "node-1", **attrs: Any) -> dict[str, Any]:
    """A metadata device; keyword attributes become typed attribute values."""
    typed: dict[str, Any] = {}
    for key, value in attrs.items():
        if isinstance(value, bool):
            typed[key] = {"bool": value}
        elif isinstance(value, int):
            typed[key] = {"int": value}
        else:
            typed[key] = {"string": value}
    out: dict[str, Any] = {"driver": driver, "pool": pool, "name": name}
    if typed:
        out["attributes"] = typed
    return out


def metadata_object(claim: str, requests: dict[str, list[dict[str, Any]]], *, version: str = V1BETA1,
                    generation: int | None = 1, pod_claim_name: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": claim, "namespace": "default"}
    if generation is not None:
        meta["generation"] = generation
    obj: dict[str, Any] = {"apiVersion": version, "kind": "DeviceMetadata", "metadata": meta}
    if pod_claim_name is not None:
        obj["podClaimName"] = pod_claim_name
    obj["requests"] = [{"name": name, "devices": devs} for name, devs in requests.items()]
    return obj


def stream(*objects: dict[str, Any]) -> str:
    """A metadata file: the objects concatenated, one per line, like the writer's encoder."""
    return "".join(json.dumps(o, indent=2) + "\n" for o in objects)


def both_versions(**kwargs: Any) -> str:
    """The same object as v1beta1 then v1alpha1 (newest first), as upstream writes it."""
    return stream(metadata_object(version=V1BETA1, **kwargs), metadata_object(version=V1ALPHA1, **kwargs))


def write(root: Path, relpath: str, text: str) -> Path:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
