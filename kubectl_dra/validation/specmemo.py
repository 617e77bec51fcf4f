"""New device-claim specs prepared and validated before, remembered by their exact JSON text.

The resourceclaim controller makes one ResourceClaim per pod from a ResourceClaimTemplate, each
with the template's spec: a webhook in front of a Job of 1,000 pods sees 1,000 claims whose
``spec.devices`` are the same. What the API server makes of a new spec (defaults applied, the
fields of disabled gates dropped, a warning for each) and the errors of the result depend only
on its content, where it sits (``spec`` or ``spec.spec``) and the feature gates, so a caller
that decides on many objects (the webhook, one per worker) may hand
:func:`~kubectl_dra.validation.admission.review` a :class:`SpecMemo` and have each spec
prepared and validated once. Decoding, metadata and admin-access authorization still run for
every object: only the spec of a CREATE is remembered.
"""

from __future__ import annotations

from typing import Any, Callable

import orjson

from ..lru import LruMemo
from ..model.jsoncopy import copy_json
from .field import FieldError, Path

__all__ = ["SpecMemo"]


#: What a new spec becomes: its prepared ``devices``, the warnings of preparing them, their errors.
NewSpec = tuple[dict, list[str], list[FieldError]]


class SpecMemo:
    """A bounded memo of new device-claim specs; thread-safe, owned by its caller.

    Only specs of at most ``max_spec_bytes`` of JSON are remembered (the text is the key and the
    prepared spec is kept as text, so the memo holds at most ``max_entries`` of each); larger
    ones, specs JSON cannot write exactly (integers beyond 64 bits) and specs whose JSON has a
    ``null`` (orjson writes NaN and the infinities, which a body read by :func:`json.loads` may
    carry, as ``null`` too) are prepared and validated every time. It is for decoded JSON (a
    webhook's bodies): a spec holding other Python values that JSON writes alike (a tuple, an
    enum member) is never remembered, but may be given what the plain-JSON spec it reads as got.
    """

    def __init__(self, max_entries: int = 256, max_spec_bytes: int = 16 * 1024) -> None:
        self.max_spec_bytes = max_spec_bytes
        self._memo = LruMemo(max_entries)
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._memo)

    def new_spec(self, devices: dict, path: Path, gates: Any, prepare: Callable[[dict], NewSpec]) -> NewSpec:
        """``prepare(copy)`` of a copy of the submitted ``devices`` (``prepare`` may change it) at
        ``path`` under ``gates``, remembered: every call gets its own copy of the prepared devices."""
        try:
            text = orjson.dumps(devices)
        except (TypeError, orjson.JSONEncodeError):  # not exactly JSON-writable: never remembered
            return prepare(copy_json(devices))
        if len(text) > self.max_spec_bytes or b"null" in text:  # NaN and null would share a key
            return prepare(copy_json(devices))
        key = (str(path), gates, text)
        found = self._memo.get(key)
        if found is not None:
            self.hits += 1
            prepared_text, warnings, errors = found
            return orjson.loads(prepared_text), list(warnings), list(errors)
        self.misses += 1
        copy = orjson.loads(text)  # (the key's text read back: the copy copy_json would make)
        if copy != devices:  # values JSON writes as others (a tuple as a list): never remembered
            return prepare(copy_json(devices))
        prepared, warnings, errors = prepare(copy)
        # FieldErrors are frozen and the prepared devices JSON as their source is: all can be kept
        self._memo.put(key, (orjson.dumps(prepared), tuple(warnings), tuple(errors)))
        return prepared, warnings, errors
