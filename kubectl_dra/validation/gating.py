"""Feature gates as validation reads them."""

from __future__ import annotations

from kubectl_dra.gates import Gate, GateReader, effective_gates, known_gate

__all__ = ["gate_enabled"]


def gate_enabled(gates: GateReader | None, gate: Gate) -> bool:
    """Whether ``gate`` is on in ``gates`` (None: no gate set, the newest release's defaults,
    as every reader takes it: :func:`~kubectl_dra.gates.effective_gates`). The name is
    checked against the gate table first, so a name the table lacks is a FeatureGateError
    whatever ``gates`` is (a duck-typed set or None included), never read as off."""
    name = gate if type(gate) is Gate else known_gate(gate)  # a member needs no lookup
    return bool(effective_gates(gates).enabled(name))
