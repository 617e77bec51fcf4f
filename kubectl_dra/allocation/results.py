"""Turn a found solution into AllocationResult dicts, as stored in ResourceClaim.status.

Per claim: ``devices.results`` in the order the devices were picked, ``devices.config``
(class configs first, once per class, then the claim's configs that apply to the
chosen requests; a config that covers every request of the claim carries no request
list), and ``nodeSelector`` (omitted when the devices are reachable from every node).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from ..errors import AllocationError
from . import capacity as cap
from ..limits import FIRST_AVAILABLE_MAX

if TYPE_CHECKING:
    from .allocator import Features
    from .search import Chosen, Search


def _device_result(f: "Features", chosen: "Chosen") -> dict[str, Any]:
    """One entry of ``devices.results``."""
    rd, device = chosen.rd, chosen.device
    out: dict[str, Any] = {
        "request": rd.full_name,
        "driver": device.slice.driver,
        "pool": device.slice.pool,
        "device": device.name,
    }
    if rd.admin:
        out["adminAccess"] = True
    if rd.tolerations:
        out["tolerations"] = [dict(t) for t in rd.tolerations]
    if f.binding_conditions:
        if device.binding_conditions:
            out["bindingConditions"] = list(device.binding_conditions)
        if device.binding_failure_conditions:
            out["bindingFailureConditions"] = list(device.binding_failure_conditions)
    if chosen.share_id is not None:
        out["shareID"] = chosen.share_id
    if chosen.consumed:
        out["consumedCapacity"] = cap.status_amounts(chosen.consumed, device)
    if f.optional_node_operations and device.slice.skip_node_operations:
        out["skipNodeOperations"] = list(device.slice.skip_node_operations)
    return out


def _selected(search: "Search", ci: int, ri: int) -> Any:
    """The RequestData used for request ``ri`` of claim ``ci`` (its chosen subrequest)."""
    return search.requests[(ci, ri, search.selected_sub.get((ci, ri), 0))]


def _covers_all(names: list[str], chosen_names: list[tuple[str, str | None]]) -> bool:
    wanted = set(names)
    for request, sub in chosen_names:
        if request in wanted:
            continue
        if sub is not None and f"{request}/{sub}" in wanted:
            continue
        return False
    return True


def _config(search: "Search", ci: int, claim: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``devices.config`` of claim ``ci`` (only called for a claim with configs to copy:
    ``search.configured``)."""
    # the claim's requests as the search parsed them (kubectl_dra.model.claims), the chosen
    # subrequest standing for a request with alternatives
    chosen = [_selected(search, ci, ri) for ri in range(search.num_requests[ci])]
    configs: list[dict[str, Any]] = []
    by_class: dict[str, tuple[int, int]] = {}
    chosen_names: list[tuple[str, str | None]] = []
    for rd in chosen:
        chosen_names.append((rd.request.request, rd.name if rd.parent is not None else None))
        span = by_class.get(rd.class_name)
        if span is not None:
            for i in range(*span):
                configs[i]["requests"].append(rd.full_name)
            continue
        start = len(configs)
        for entry in (rd.class_.get("spec") or {}).get("config") or ():
            item: dict[str, Any] = {"source": "FromClass", "requests": [rd.full_name]}
            item.update({k: v for k, v in entry.items() if k != "requests"})
            configs.append(item)
        by_class[rd.class_name] = (start, len(configs))
    for entry in ((claim.get("spec") or {}).get("devices") or {}).get("config") or ():
        names = list(entry.get("requests") or ())
        applies = not names
        if not applies:
            for rd in chosen:
                if rd.request.request in names:
                    applies = True
                    break
                if rd.parent is not None and rd.full_name in names:
                    applies = True
                    break
        if not applies:
            continue
        item = {"source": "FromClaim"}
        if names:
            item["requests"] = names
        item.update({k: v for k, v in entry.items() if k != "requests"})
        configs.append(item)
    for item in configs:
        if "requests" in item and _covers_all(item["requests"], chosen_names):
            del item["requests"]
    # keep the API's field order: source, requests, then the configuration
    return [{k: item[k] for k in sorted(item, key=lambda k: (k != "source", k != "requests"))} for item in configs]


def _add_requirements(into: list[dict[str, Any]], reqs: list[Mapping[str, Any]]) -> None:
    for req in reqs:
        values = set(req.get("values") or ())
        if any(r.get("key") == req.get("key") and r.get("operator") == req.get("operator")
               and set(r.get("values") or ()) == values for r in into):
            continue
        into.append(dict(req))


def node_selector(chosen: list["Chosen"], node: str) -> dict[str, Any] | None:
    """The result's node selector: the node itself when any device is local to it."""
    fields: list[dict[str, Any]] = []
    exprs: list[dict[str, Any]] = []
    for c in chosen:
        d, sv = c.device, c.device.slice
        if sv.per_device_node_selection:
            name, selector = d.node_name, d.node_selector
        else:
            name, selector = sv.node_name, sv.node_selector
        if name or d.binds_to_node:
            return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
        if selector is not None:
            terms = selector.get("nodeSelectorTerms") or []
            if len(terms) == 1:
                _add_requirements(fields, terms[0].get("matchFields") or [])
                _add_requirements(exprs, terms[0].get("matchExpressions") or [])
            elif len(terms) > 1:
                raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
    if not fields and not exprs:
        return None
    term: dict[str, Any] = {}
    if exprs:
        term["matchExpressions"] = exprs
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def build_results(search: "Search", node: str) -> list[dict[str, Any]]:
    """One AllocationResult dict per claim, in the order the claims were given."""
    f = search.f
    out: list[dict[str, Any]] = []
    for ci, claim in enumerate(search.claims):
        chosen = search.results[ci]
        devices: dict[str, Any] = {}
        if chosen:
            devices["results"] = [_device_result(f, c) for c in chosen]
        if search.configured[ci]:  # (else nothing to copy, whichever subrequests were chosen)
            config = _config(search, ci, claim)
            if config:
                devices["config"] = config
        allocation: dict[str, Any] = {"devices": devices} if devices else {}
        try:
            selector = node_selector(chosen, node)
        except AllocationError as exc:
            meta = claim.get("metadata") or {}
            raise AllocationError(f"create NodeSelector for claim {meta.get('name') or ''}: {exc}") from None
        if selector is not None:
            allocation["nodeSelector"] = selector
        out.append(allocation)
    return out


def score_of(search: "Search") -> int:
    """The node's preference for prioritized lists: higher when earlier subrequests were chosen.

    For every request with firstAvailable, the chosen subrequest at index ``i`` adds
    ``8 - i`` (8 is the most subrequests a request may list), so a node where every
    claim got its first choice scores highest and requests without alternatives add
    nothing. The scheduler normalises these per-node sums to 0..100 across nodes.
    """
    return sum(FIRST_AVAILABLE_MAX - index for index in search.selected_sub.values()) if search.selected_sub else 0
