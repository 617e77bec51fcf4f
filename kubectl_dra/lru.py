"""A bounded, thread-safe memo of a pure function: the one LRU the package's caches share."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

__all__ = ["LruMemo"]


class LruMemo:
    """A bounded, thread-safe memo of a pure function of immutable keys.

    Values depend only on their key, so what a caller gets never depends on what the
    process computed before; the bound only decides what is computed again.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Any) -> Any:
        """The stored value, or None."""
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def put(self, key: Any, value: Any) -> None:
        """Store a value, dropping the least recently used beyond the bound."""
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        """Forget everything (benchmarks measure cold compiles this way)."""
        with self._lock:
            self._items.clear()
