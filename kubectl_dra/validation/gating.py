"""Feature gates as validation reads them."""

from __future__ import annotations

from kubectl_dra.gates import Gate, GateReader, known_gate

__all__ = ["gate_enabled"]


def gate_enabled(gates: GateReader | None, gate: Gate) -> bool:
    """Whether ``gate`` is on in ``gates`` (None: no gate set, every feature off). The name is
    checked against the gate table first, so a name the table lacks is a FeatureGateError
    whatever ``gates`` is (a duck-typed set or None included), never read as off."""
    name = known_gate(gate)
    if gates is None:
        return False
    return bool(gates.enabled(name))
