"""The kubectl-dra admission webhook: the core's admission decision served to the API server.

``webhook.app`` is the Flask app (``/validate``, ``/mutate``, ``/healthz``, ``/readyz``,
``/metrics``), ``webhook.serve`` runs it over TLS in gunicorn, ``webhook.certs`` bootstraps
its certificates and ``webhook.cli`` is the ``dra-webhook`` command.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
