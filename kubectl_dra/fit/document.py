"""The ``kubectl-dra/v1 Fit`` document (``fit -o json``) and the one-line summary.

Shape::

    {"apiVersion": "kubectl-dra/v1", "kind": "Fit",
     "featureGates": {...}, "claims": [{"namespace", "name"}],
     "placement": "ranked" | "spread", "limit": N | null,
     "replicas": 37 | null, "stopped": "NoNodeFits" | "Limit" | "NotLimitedByDevices",
     "summary": "stops at 37: 12 nodes <reason>; 3 nodes <reason>",
     "lastNode": {"node", "reason"} | null,
     "reasons": [{"reason", "nodes"}],
     "nodes": [{"node", "replicas", "reason"}],
     "pools": [{"driver", "pool", "sharedBy", "replicas", "devices"}],
     "modelled": "..."}

``replicas`` is how many more copies of the target's claims fit together, one after the
other, each committed as allocated before the next. ``nodes`` lists every node considered,
in the preview's ranking before the first replica, with the replicas it took and why no
further one fits there (explain's one-line node reason on the final state; ``fits`` when the
count stopped at the limit first). ``reasons`` counts those reasons over the nodes that take
no more, most frequent first. ``lastNode`` is where the last replica went (ranked placement:
the node the next replica then did not fit on). ``pools`` are the pools the replicas took
devices from: ``sharedBy`` is the number of considered nodes that see the pool (more than one
for network-attached pools), ``devices`` the devices (or shares) taken.

A replica that takes no device (requests of count 0, only claims allocated before, admin
access only) leaves the cluster as it found it: devices put no bound on the count, so
``stopped`` is ``NotLimitedByDevices`` and ``replicas`` is null (with a limit, the count is
the limit, ``stopped`` ``Limit``); the nodes where it fits read ``fits`` with ``replicas`` null.
"""

from __future__ import annotations

from collections import Counter

from ..types import Obj
from ..preview.document import gates_dict
from ..scheduling import MODELLED as SCHEDULER_MODELLED
from .run import LIMIT, FitResult

API_VERSION = "kubectl-dra/v1"
KIND = "Fit"

#: what the count models (also in ``fit --help``)
MODELLED = (SCHEDULER_MODELLED + " Each replica of a pod is bound on its node (its requests, host ports and "
            "labels count for the next one) along with its claims; the count is an upper bound only for what "
            "is not modelled.")


#: reasons named in the one-line summary (the document's ``reasons`` has them all)
SUMMARY_REASONS = 5


def reason_counts(result: FitResult) -> list[tuple[str, int]]:
    """(reason, number of nodes) over the nodes that take no further replica, most first."""
    counts = Counter(result.reasons.get(n, "") for n in result.nodes if result.reasons.get(n, "") != "fits")
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def summary(result: FitResult) -> str:
    """``stops at 37: 12 nodes <reason>; 3 nodes <reason>`` (``37 fit (the limit)`` when capped)."""
    count = result.count
    replicas = f"{count} replica{'s' if count != 1 else ''}"
    if result.stopped == LIMIT:
        nothing = " (a replica takes no device)" if result.takes_nothing_on is not None else ""
        return f"{replicas} fit (the limit asked for; more may fit){nothing}"
    counts = reason_counts(result)
    parts = [f"{n} node{'s' if n != 1 else ''} {reason}" for reason, n in counts[:SUMMARY_REASONS]]
    if len(counts) > SUMMARY_REASONS:
        rest = sum(n for _, n in counts[SUMMARY_REASONS:])
        parts.append(f"{rest} node{'s' if rest != 1 else ''} for {len(counts) - SUMMARY_REASONS} other reasons")
    if result.unlimited:
        fitting = sum(1 for n in result.nodes if result.reasons.get(n) == "fits")
        text = (f"not limited by devices: a replica takes no device, so any number fits as far as DRA goes "
                f"(on {fitting} of {len(result.nodes)} node{'s' if len(result.nodes) != 1 else ''})")
        return text + (": " + "; ".join(parts) if parts else "")
    text = f"stops at {count}"
    if result.takes_nothing_on is not None:  # (bound by the scheduler's other filters, not by devices)
        text += " (not limited by devices: a replica takes no device)"
    if parts:
        text += ": " + "; ".join(parts)
    if result.last_node is not None and result.reasons.get(result.last_node):
        text += f" (last replica on {result.last_node}, then: {result.reasons[result.last_node]})"
    return text


def fit_document(result: FitResult) -> Obj:
    """The whole document, key order as documented."""
    last = None
    if result.last_node is not None:
        last = {"node": result.last_node, "reason": result.reasons.get(result.last_node, "")}
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "featureGates": gates_dict(result.gates),
        "claims": result.plan.claim_refs(),
        "placement": result.placement,
        "limit": result.limit,
        "replicas": None if result.unlimited else result.count,
        "stopped": result.stopped,
        "summary": summary(result),
        "lastNode": last,
        "reasons": [{"reason": r, "nodes": n} for r, n in reason_counts(result)],
        "nodes": [{"node": n, "replicas": None if result.unlimited and result.reasons.get(n) == "fits"
                   else result.per_node.get(n, 0), "reason": result.reasons.get(n, "")} for n in result.nodes],
        "pools": [{"driver": p.driver, "pool": p.pool, "sharedBy": p.nodes, "replicas": p.replicas,
                   "devices": p.devices} for p in result.pools],
        "modelled": MODELLED,
    }
