"""The webhook's way to the API server: one client configuration and one error wording for
the namespace lookups and the certificate commands."""

from __future__ import annotations

import os
from typing import Any


class ClusterConfigError(Exception):
    """No usable cluster configuration (in-cluster or kubeconfig); the message is one line."""


def one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception's message on one line, clipped (client errors can carry whole responses);
    for urllib3's MaxRetryError, its underlying cause, which says it best."""
    reason = getattr(exc, "reason", None)
    text = " ".join(str(reason if isinstance(reason, BaseException) else exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def client_configuration(kubeconfig: str | None, context: str | None) -> Any:
    """A kubernetes.client.Configuration: in-cluster in a pod (unless a kubeconfig is given),
    else from the kubeconfig; :class:`ClusterConfigError` when neither is usable."""
    from kubernetes import client, config

    configuration = client.Configuration()
    try:
        if kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
            config.load_incluster_config(client_configuration=configuration)
        else:
            config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=configuration)
    except Exception as exc:  # config errors are many types (ConfigException, OSError, YAML errors)
        raise ClusterConfigError(f"no usable cluster configuration: {one_line(exc)}") from None
    return configuration
