"""kubectl-dra: preview, explain and validate Kubernetes Dynamic Resource Allocation offline or live.

The package is split so that data flows one way: ``state`` (sources) → ``model`` →
core (``allocation``, ``validation``, ``metadata``, ``cel``) → presenters (``cli``,
and the separate ``webhook`` package). The core never imports click or flask; the kubernetes
client is imported by one source, ``state.live`` (tests/test_import_layers.py checks all of it).
"""

__version__ = "0.1.0"
