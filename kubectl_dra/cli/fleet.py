"""Presenters shared by the fleet commands (pending, drain-check) and usage: stranded devices."""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

from ..fleet.stranded import StrandedClaim, format_age
from .common import format_table

if TYPE_CHECKING:
    from ..fleet.gang import GangResult
    from ..gates import FeatureGates
    from ..state import ClusterState
    from ..types import Obj

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


# --------------------------------------------------------------------------- gangs


def render_gang(result: "GangResult", hypothetical: Mapping[str, str] | None = None, no_headers: bool = False) -> str:
    """The gang's one-line answer, then where each pod goes (the joint placement when the
    scheduler's order fails and one exists, else the scheduler's order up to the pod that fails)."""
    from ..fleet.gang import FITS

    hypothetical = hypothetical or {}
    shown = result.greedy if result.status == FITS or result.joint is None else result.joint
    label = "POD-BY-POD" if shown is result.greedy else "JOINT"
    rows = []
    for placed in shown:
        node = placed.node or "-"
        if placed.node in hypothetical:
            node += " (hypothetical)"
        rows.append([f"{placed.namespace}/{placed.name}", node, _devices_text(placed.devices()) or "-",
                     "-" if placed.placed else placed.answer.reason])
    return result.summary() + "\n" + format_table(["POD", f"NODE ({label})", "DEVICES", "REASON"], rows, no_headers)


def group_gang(state: "ClusterState", gates: "FeatureGates", targets: Sequence[str], filenames: Sequence[str],
               namespace: str, all_namespaces: bool, timeout: float | None) -> "tuple[Obj, GangResult] | None":
    """For a sole ``podgroup/NAME`` target whose PodGroup has pending pods: the PodGroup and
    its gang's answer; None for any other target."""
    from ..fleet.evaluate import PodEvaluator
    from ..fleet.gang import place_gang
    from ..fleet.placement import Placer
    from ..fleet.pods import is_pending, pod_key, queue_order
    from ..preview import candidate_nodes
    from ..preview.targets import namespace_of, parse_target

    if filenames or len(targets) != 1:
        return None
    target = parse_target(targets[0], "" if all_namespaces else namespace)
    if target.kind != "PodGroup":
        return None
    ns = target.namespace or namespace_of(state, "PodGroup", target.name)
    group = state.get("PodGroup", target.name, ns)
    pods = queue_order(p for p in state.pods if pod_key(p)[0] == ns and is_pending(p)
                       and ((p.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") == target.name)
    if not pods:
        return None
    nodes = candidate_nodes(state)
    placer = Placer(PodEvaluator(state, gates, nodes, timeout=None), nodes)
    return group, place_gang(placer, pods, f"podgroup/{ns}/{target.name}", timeout)


def group_has_claims(group: "Obj") -> bool:
    return bool((group.get("spec") or {}).get("resourceClaims"))


def gang_document(result: "GangResult", gates: "FeatureGates", hypothetical: Mapping[str, str] | None = None) -> "Obj":
    """The ``kind: Gang`` document of ``-o json|yaml`` for a gang of pods: the scheduler's
    pod-by-pod placement, the joint placement when only that fits, and the summary line."""
    from ..preview.document import gates_dict

    return {"apiVersion": "kubectl-dra/v1", "kind": "Gang", "featureGates": gates_dict(gates),
            "hypotheticalNodes": dict(hypothetical or {}), **result.to_dict()}


def gang_of_targets(state: "ClusterState", gates: "FeatureGates", targets: Sequence[str], filenames: Sequence[str],
                    ns: str, all_namespaces: bool, timeout: float | None, nodes: Sequence[str], output: str,
                    hypothetical: Mapping[str, str], no_headers: bool) -> tuple[int | None, "GangResult | None"]:
    """preview's and explain's gang step: (exit code, None) when a gang of pods is the whole
    answer (printed here), else (None, the gang to print after the claims' answer, or None)."""
    import click

    from .common import dump

    if output not in ("table", "wide", "json", "yaml") or nodes:
        return None, None
    gang = group_gang(state, gates, targets, filenames, ns, all_namespaces, timeout)
    if gang is None:
        return None, None
    pods_only = not group_has_claims(gang[0])
    if output in ("json", "yaml"):
        if not pods_only:  # a gang with claims: the Preview/Explanation document answers for its claims
            return None, None
        click.echo(dump(gang_document(gang[1], gates, hypothetical), output))
        return (0 if gang[1].fits else 1), None
    if pods_only:  # a gang of pods: their placement is the answer
        click.echo(render_gang(gang[1], hypothetical, no_headers))
        return (0 if gang[1].fits else 1), None
    return None, gang[1]
