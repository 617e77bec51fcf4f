"""The kubectl-dra admission webhook: the core's admission decision served to the API server.

``webhook.service`` answers ``/validate``, ``/mutate``, ``/healthz``, ``/readyz`` and ``/metrics``;
``webhook.rsgi`` serves it in granian (``webhook.serve``, over TLS) and ``webhook.app`` in Flask
(in-process, tests); ``webhook.advice`` adds apply-time warnings from a watch cache of the
cluster's devices; ``webhook.certs`` bootstraps the certificates and ``webhook.cli`` is the
``dra-webhook`` command.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
