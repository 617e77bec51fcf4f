"""Fields the API does not know, as kubectl's strict field validation reports them.

The API server drops unknown fields while decoding (or, with ``fieldValidation=Strict``,
which ``kubectl apply`` asks for by default, rejects the request): a typo such as
``conut: 2`` would otherwise pass unnoticed and the object would silently mean
something else. The strict OpenAPI schemas come from the optional ``kubernetes-validate``
package; without it `kubectl dra validate` says what to install (and, for a kind it has no
schema for, nothing is reported).
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

#: the package that holds the per-release strict JSON schemas
PACKAGE = "kubernetes-validate"


def available() -> bool:
    """Whether the strict schemas can be used here."""
    return _schema_root() is not None


@functools.lru_cache(maxsize=1)
def _schema_root() -> Path | None:
    try:
        import kubernetes_validate  # noqa: F401  (optional dependency)
    except ImportError:
        return None
    root = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    return root if root.is_dir() else None


def _release_dir(release: str) -> Path | None:
    """The newest ``v<release>*-local-strict`` schema directory not newer than ``release``."""
    root = _schema_root()
    if root is None:
        return None
    want = tuple(int(p) for p in release.split(".")[:2])
    best: tuple[tuple[int, int], Path] | None = None
    for path in root.iterdir():
        m = re.fullmatch(r"v(\d+)\.(\d+)\.\d+-local-strict", path.name)
        if not m:
            continue
        have = (int(m.group(1)), int(m.group(2)))
        if have <= want and (best is None or have > best[0]):
            best = (have, path)
    return best[1] if best else None


@functools.lru_cache(maxsize=32)
def _validator(release: str, kind: str, api_version: str) -> Any:
    """A JSON-schema validator for one kind and API version, built once (None: no schema)."""
    directory = _release_dir(release)
    if directory is None:
        return None
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    schema_file = directory / f"{kind.lower()}-{group_version}.json"
    if not schema_file.is_file():
        return None
    import jsonschema
    from referencing import Registry, Resource

    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    definitions = json.loads((directory / "_definitions.json").read_text(encoding="utf-8"))
    registry = Resource.from_contents(definitions) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.validators.Draft202012Validator(schema, registry=registry)


def unknown_fields(obj: dict[str, Any], release: str) -> list[str] | None:
    """Paths (``spec.devices.requests[0].exactly.conut``) of the fields of ``obj`` that the
    release's API does not define, in document order; None when there is no schema to ask."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api_version, str):
        return None
    validator = _validator(release, kind, api_version)
    if validator is None:
        return None
    found: list[str] = []
    for error in validator.iter_errors(obj):
        if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
            continue
        schema = error.schema if isinstance(error.schema, dict) else {}
        known = set(schema.get("properties") or {})
        patterns = [re.compile(p) for p in (schema.get("patternProperties") or {})]
        for key in error.instance:
            if key not in known and not any(p.search(key) for p in patterns):
                found.append(_render(list(error.absolute_path) + [key]))
    return found


def _render(parts: list[Any]) -> str:
    """A field path as the API server writes it: ``a.b[0].c``."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
