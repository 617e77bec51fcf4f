"""Presenters shared by the fleet commands (pending, drain-check) and usage: stranded devices."""

from __future__ import annotations

from typing import Sequence

from ..fleet.stranded import StrandedClaim, format_age
from .common import format_table

#: devices named per stranded claim before "+N more"
DEVICES_SHOWN = 3


def _devices_text(devices: Sequence[str]) -> str:
    shown = ", ".join(devices[:DEVICES_SHOWN])
    return shown + (f" (+{len(devices) - DEVICES_SHOWN} more)" if len(devices) > DEVICES_SHOWN else "")


def render_stranded(claims: Sequence[StrandedClaim], no_headers: bool = False) -> str:
    """``N stranded claims hold M devices`` and one row per claim; "" when there are none."""
    if not claims:
        return ""
    devices = sum(len(c.devices) for c in claims)
    head = (f"{len(claims)} stranded claim{'s' if len(claims) != 1 else ''} hold{'s' if len(claims) == 1 else ''} "
            f"{devices} device{'s' if devices != 1 else ''} no running pod uses:")
    rows = [[f"{c.namespace}/{c.name}", format_age(c.age_seconds), str(len(c.devices)), _devices_text(c.devices), c.why]
            for c in claims]
    return head + "\n" + format_table(["CLAIM", "IDLE", "DEVICES", "HELD", "WHY"], rows, no_headers)
