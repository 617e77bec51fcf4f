"""Logs an operator can keep: one capped line per admission decision, and repeats rate-limited.

Every AdmissionReview the webhook answers gets one line at info (:func:`decision_line`): the
decision, endpoint, operation, kind, namespace/name, uid, time taken and, for a denial, the
number of errors and the first few, each clipped, on one line (control characters in names and
messages cannot start a new line). A failure inside the core is one line at warning with the
exception's type and clipped message; its traceback goes out at debug only.

:class:`RepeatFilter` (a stdlib :class:`logging.Filter` on the handler) passes at most ``burst``
lines with the same repeat key per ``interval`` seconds and at most ``max_per_second`` lines in
all; the next line passed for a key says how many were left out. Its state is bounded: at most
``max_keys`` keys, the least recently used dropped first. The admission service asks it
(:meth:`RepeatFilter.take`) before it makes a decision's record at all: a busy webhook leaves
out most of them, and making a record it then drops cost as much as the floor's own work.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from typing import Callable, Hashable, Iterable

#: Longest piece of a name, message or field in a log line.
MAX_PIECE_CHARS = 200
#: Longest log line the webhook writes (before the formatter's prefix).
MAX_LINE_CHARS = 1000
#: Errors of one denial named in its line (the rest are counted).
MAX_ERRORS_LOGGED = 3

_INDEX = re.compile(r"\[[^\]]*\]")


def clip(value: object, limit: int = MAX_PIECE_CHARS) -> str:
    """``value`` as one printable line of at most ``limit`` characters."""
    text = str(value)
    if len(text) > 4 * limit:  # never scan a huge string whole
        text = text[: 4 * limit]
    line = text if text.isprintable() else "".join(ch if ch.isprintable() else " " for ch in text)
    return line if len(line) <= limit else line[: limit - 3] + "..."


def field_shape(field: str) -> str:
    """A field path with its indices and map keys left out, for repeat keys (``a[0].b`` -> ``a[].b``)."""
    return _INDEX.sub("[]", field)


def decision_line(decision: str, endpoint: str, operation: str, kind: str, namespace: str, name: str,
                  uid: str, seconds: float, details: Iterable[str] = (), total: int = 0) -> str:
    """One log line for one decision; ``details`` are the first errors (or the failure), ``total`` all of them."""
    who = f"{namespace}/{name}" if namespace else name
    line = (f"{decision} {endpoint} {clip(operation, 16)} {clip(kind, 64)} {clip(who or '-')} "
            f"uid={clip(uid, 64)} {seconds * 1000:.1f}ms")
    shown = [clip(d) for d in list(details)[:MAX_ERRORS_LOGGED]]
    if total:
        line += f" errors={total}"
    if shown:
        line += ": " + "; ".join(shown)
        if total > len(shown):
            line += f"; ... and {total - len(shown)} more"
    return clip(line, MAX_LINE_CHARS)


class RepeatFilter(logging.Filter):
    """At most ``burst`` records per repeat key per ``interval`` seconds and ``max_per_second`` in all."""

    def __init__(self, *, burst: int = 5, interval: float = 60.0, max_per_second: float = 50.0,
                 max_keys: int = 1024, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.burst = burst
        self.interval = interval
        self.max_per_second = max_per_second
        self.max_keys = max_keys
        self._clock = clock
        self._lock = threading.Lock()
        #: key -> [window start, passed in window, left out since the last passed record]
        self._windows: OrderedDict[Hashable, list[float]] = OrderedDict()
        self._second = (0.0, 0)  # start of the current second, records passed in it
        self._dropped_overall = 0

    def filter(self, record: logging.LogRecord) -> bool:
        """Pass or drop ``record``; a passed record notes the records of its key left out before it.
        A record marked ``repeat_passed`` was let through by :meth:`take` before it was made."""
        if getattr(record, "repeat_passed", False):
            return True
        key = getattr(record, "repeat_key", None) or (record.name, record.levelno, str(record.msg))
        note = self.take(key)
        if note is None:
            return False
        if note:
            record.msg, record.args = record.getMessage() + note, None
        return True

    def take(self, key: Hashable) -> str | None:
        """Whether a line with repeat ``key`` may go out now: None if not, else the note it ends
        with ("" or how many lines were left out before it). A caller that asks before making
        its record (a busy webhook's decision lines, most of which are left out) spares making it."""
        with self._lock:
            now = self._clock()
            window = self._window(key, now)
            if window[1] >= self.burst:
                window[2] += 1
                return None
            if not self._take_overall(now):
                return None
            window[1] += 1
            skipped, window[2] = int(window[2]), 0
            overall, self._dropped_overall = self._dropped_overall, 0
        note = f" ({skipped} similar lines left out)" if skipped else ""
        note += f" ({overall} lines left out: over {self.max_per_second:g} per second)" if overall else ""
        return note

    def _window(self, key: Hashable, now: float) -> list[float]:
        """The key's current window, a new one if it ended (keeping its left-out count); bounded LRU."""
        window = self._windows.get(key)
        if window is None:
            window = [now, 0, 0]
            self._windows[key] = window
            while len(self._windows) > self.max_keys:
                self._windows.popitem(last=False)
        elif now - window[0] >= self.interval:
            window[0], window[1] = now, 0
        self._windows.move_to_end(key)
        return window

    def _take_overall(self, now: float) -> bool:
        """One record of this second's overall budget, if any is left."""
        start, passed = self._second
        if now - start >= 1.0:
            start, passed = now, 0
        if passed >= self.max_per_second:
            self._second = (start, passed)
            self._dropped_overall += 1
            return False
        self._second = (start, passed + 1)
        return True
