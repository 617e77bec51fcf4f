"""The webhook as it was served before granian, for ``bench_admission``'s side-by-side table: the
Flask app in gunicorn's threaded workers (2 workers x 4 threads, keep-alive 75 s, TLS from the
same files), preloaded and warmed up the same way. Benchmarks only (needs ``gunicorn``,
the ``bench`` extra): ``python -m benchmarks.admission_gthread --bind HOST:PORT --cert-file F
--key-file F --kubeconfig F --metrics-dir D``.
"""

from __future__ import annotations

import argparse
import gc
import sys
from typing import Any

#: The GIL switch interval the gthread stack was served with (CPU-bound requests on its threads
#: finished one at a time instead of interleaving every 5 ms).
GTHREAD_SWITCH_INTERVAL = 0.02


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="admission_gthread")
    for flag in ("--bind", "--cert-file", "--key-file", "--kubeconfig", "--metrics-dir"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args(argv)

    from gunicorn.app.base import BaseApplication

    from webhook.app import Settings, create_app
    from webhook.namespaces import KubernetesNamespaceFetcher, NamespaceLabels
    from webhook.serve import _configure_logging, allow_deep_nesting, prepare_metrics_dir, resolve_gates
    from webhook.service import warm_up

    prepare_metrics_dir(args.metrics_dir)
    _configure_logging("info")  # as dra-webhook serve runs by default
    gates = resolve_gates(None, None)
    fetcher = KubernetesNamespaceFetcher(args.kubeconfig, None, 2.0)
    fetcher.preload()
    warm_up(gates)
    gc.collect()
    gc.freeze()
    sys.setswitchinterval(GTHREAD_SWITCH_INTERVAL)
    allow_deep_nesting()
    app = create_app(Settings(gates=gates, namespace_labels=NamespaceLabels(fetcher, ttl=10.0),
                              readiness=fetcher.readiness))

    class Server(BaseApplication):  # type: ignore[misc]  # gunicorn ships no types
        def load_config(self) -> None:
            settings: dict[str, Any] = {
                "bind": [args.bind], "workers": args.workers, "worker_class": "gthread", "threads": args.threads,
                "keepalive": 75, "timeout": 30, "graceful_timeout": 10, "preload_app": True,
                "certfile": args.cert_file, "keyfile": args.key_file, "accesslog": None, "errorlog": "-",
                "loglevel": "warning", "control_socket_disable": True,
            }
            for key, value in settings.items():
                self.cfg.set(key, value)

        def load(self) -> Any:
            return app

    Server().run()


if __name__ == "__main__":
    main()
