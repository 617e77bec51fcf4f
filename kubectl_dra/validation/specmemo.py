"""Field errors of device-claim specs validated before, remembered by their exact JSON text.

The resourceclaim controller makes one ResourceClaim per pod from a ResourceClaimTemplate, each
with the template's spec: a webhook in front of a Job of 1,000 pods sees 1,000 claims whose
``spec.devices`` are the same. The errors of a spec depend only on its content, where it sits
(``spec`` or ``spec.spec``) and the feature gates, so a caller that decides on many objects (the
webhook, one per worker) may hand :func:`~kubectl_dra.validation.admission.review` a
:class:`SpecMemo` and have each spec validated once. Metadata, defaults, dropped fields and
admin-access authorization still run for every object: only the spec rules are remembered.
"""

from __future__ import annotations

from typing import Any, Callable

import orjson

from ..lru import LruMemo
from .field import FieldError, Path

__all__ = ["SpecMemo"]


class SpecMemo:
    """A bounded memo of device-claim spec errors; thread-safe, owned by its caller.

    Only specs of at most ``max_spec_bytes`` of JSON are remembered (the text is the key, so
    the memo holds at most ``max_entries × max_spec_bytes``); larger ones, specs JSON cannot
    write exactly (integers beyond 64 bits) and specs whose JSON has a ``null`` (orjson writes
    NaN and the infinities, which a body read by :func:`json.loads` may carry, as ``null`` too)
    are validated every time.
    """

    def __init__(self, max_entries: int = 256, max_spec_bytes: int = 16 * 1024) -> None:
        self.max_spec_bytes = max_spec_bytes
        self._memo = LruMemo(max_entries)
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._memo)

    def errors(self, devices: Any, path: Path, gates: Any,
               validate: Callable[[], list[FieldError]]) -> list[FieldError]:
        """``validate()``'s errors for ``devices`` at ``path`` under ``gates``, remembered."""
        try:
            text = orjson.dumps(devices)
        except (TypeError, orjson.JSONEncodeError):  # not exactly JSON-writable: never remembered
            return validate()
        if len(text) > self.max_spec_bytes or b"null" in text:  # NaN and null would share a key
            return validate()
        key = (str(path), gates, text)
        found = self._memo.get(key)
        if found is None:
            self.misses += 1
            found = tuple(validate())  # FieldErrors are frozen: a tuple of them can be shared
            self._memo.put(key, found)
        else:
            self.hits += 1
        return list(found)
