"""NodePorts: a host port the pod asks for must be free on the node (0.0.0.0 clashes with every address)."""

from __future__ import annotations

from typing import Sequence

from .nodeinfo import NodeInfo
from .status import Status

NAME = "NodePorts"
REASON = "node(s) didn't have free ports for the requested pod ports"


def node_ports(ports: Sequence[tuple[str, str, int]], node: NodeInfo) -> Status | None:
    """Refuse a node where one of ``ports`` (hostIP, protocol, hostPort) is in use."""
    for ip, protocol, port in ports:
        if node.port_conflict(ip, protocol, port):
            holder = next((p.ref for p in node.pods for q in p.ports
                           if q[1:] == (protocol, port) and (ip == "0.0.0.0" or q[0] in (ip, "0.0.0.0"))), "?")
            return Status(NAME, (REASON,), (f"host port {protocol}/{port} (hostIP {ip}) is held by pod {holder}",))
    return None
