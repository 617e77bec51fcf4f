"""``dra-webhook``: ``serve`` the admission webhook over TLS, or bootstrap its ``certs``."""

from __future__ import annotations

import sys

import click

from kubectl_dra.errors import DraError

from . import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="dra-webhook")
def cli() -> None:
    """The kubectl-dra admission webhook for resource.k8s.io/v1 objects."""


@cli.command()
@click.option("--bind", default="0.0.0.0:8443", show_default=True, help="Address and port to listen on.")
@click.option("--cert-file", default="/etc/dra-webhook/tls/tls.crt", show_default=True,
              help="Serving certificate (PEM); reloaded when it changes.")
@click.option("--key-file", default="/etc/dra-webhook/tls/tls.key", show_default=True,
              help="Key of the serving certificate (PEM); reloaded when it changes.")
@click.option("--workers", type=click.IntRange(1, 64), default=2, show_default=True, help="Worker processes.")
@click.option("--threads", type=click.IntRange(1, 256), default=4, show_default=True, help="Decision threads per worker (admin-access, large and deeply nested objects; small ones are decided on the event loop).")
@click.option("--mode", type=click.Choice(["enforce", "warn"]), default="enforce", show_default=True,
              help="enforce: deny invalid objects; warn: admit them with AdmissionReview warnings.")
@click.option("--feature-gates", metavar="A=true,B=false",
              help="Feature gates as the API server takes them, on top of the release defaults.")
@click.option("--kubernetes-version", metavar="1.34…1.37", help="Start from that release's default gates.")
@click.option("--kubeconfig", metavar="FILE", help="Kubeconfig for namespace lookups (default: in-cluster).")
@click.option("--context", "kube_context", metavar="NAME", help="Kubeconfig context.")
@click.option("--namespace-cache-ttl", type=click.FloatRange(0), default=10.0, show_default=True, metavar="SECONDS",
              help="How long namespace labels are cached (admin-access check).")
@click.option("--lookup-timeout", type=click.FloatRange(0.1), default=2.0, show_default=True, metavar="SECONDS",
              help="Timeout of one namespace lookup.")
@click.option("--header-timeout", type=click.FloatRange(0.001, 60), default=5.0, show_default=True, metavar="SECONDS",
              help="Time a client has to send a request's headers (also how long an idle keep-alive connection stays).")
@click.option("--body-timeout", type=click.FloatRange(0.001), default=10.0, show_default=True, metavar="SECONDS",
              help="Time a client has to send a request's body once its headers are in.")
@click.option("--max-connections", type=click.IntRange(1), default=512, show_default=True,
              help="Open connections per worker; more wait in the listen backlog.")
@click.option("--apply-warnings/--no-apply-warnings", default=True, show_default=True,
              help="Warn (never deny) at apply time about claims no device matches, missing DeviceClasses, "
              "classes that match nothing and slices whose attribute types disagree; needs list/watch of "
              "deviceclasses and resourceslices.")
@click.option("--warnings-deadline", type=click.FloatRange(0.001, 5), default=0.05, show_default=True,
              metavar="SECONDS", help="Longest time the warnings may add to one admission; past it they are skipped.")
@click.option("--warnings-max-devices", type=click.IntRange(0), default=20_000, show_default=True,
              help="Most devices each worker's watch cache holds (~2.7 KiB each); in a larger cluster the warnings "
              "are off.")
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]), default="info", show_default=True)
@click.option("--metrics-dir", metavar="DIR", help="Directory for multiprocess metrics (default: a new temp dir).")
def serve(**kwargs: object) -> None:
    """Serve /validate, /mutate, /healthz, /readyz and /metrics over TLS."""
    from .serve import ServeOptions, run

    run(ServeOptions(**kwargs))  # type: ignore[arg-type]


@cli.command()
@click.option("--service", default="dra-webhook", show_default=True, help="Name of the webhook's Service.")
@click.option("-n", "--namespace", default="dra-system", show_default=True, help="Namespace of the Service and Secrets.")
@click.option("--out-dir", metavar="DIR", help="Keep the certificates as files in DIR.")
@click.option("--secret", metavar="NAME", help="Keep the serving certificate in this kubernetes.io/tls Secret.")
@click.option("--ca-secret", metavar="NAME", help="Secret for the CA key pair (default: <secret>-ca).")
@click.option("--validating-webhook", "validating_webhooks", multiple=True, metavar="NAME",
              help="ValidatingWebhookConfiguration whose caBundle to set. Repeatable.")
@click.option("--mutating-webhook", "mutating_webhooks", multiple=True, metavar="NAME",
              help="MutatingWebhookConfiguration whose caBundle to set. Repeatable.")
@click.option("--validity-days", type=click.FloatRange(min=1 / 24), default=365.0, show_default=True)
@click.option("--ca-validity-days", type=click.FloatRange(min=1 / 24), default=5 * 365.0, show_default=True)
@click.option("--renew-before-days", type=click.FloatRange(0), default=30.0, show_default=True,
              help="Renew a certificate this long before it expires.")
@click.option("--dns", "dns_names", multiple=True, metavar="NAME",
              help="Another DNS name for the serving certificate (e.g. localhost). Repeatable.")
@click.option("--ip", "ip_addresses", multiple=True, metavar="ADDRESS",
              help="An IP address for the serving certificate (e.g. 127.0.0.1). Repeatable.")
@click.option("--force", is_flag=True,
              help="Replace stored certificates that cannot be kept for another reason than expiry "
                   "(other names, unreadable, mismatched); without it they are left alone and the command fails.")
@click.option("--kubeconfig", metavar="FILE", help="Kubeconfig (default: in-cluster).")
@click.option("--context", "kube_context", metavar="NAME", help="Kubeconfig context.")
def certs(**kwargs: object) -> None:
    """Create or renew the CA and serving certificate; inject the CA bundle into the webhooks."""
    from .certs import CertsOptions, run

    for line in run(CertsOptions(**kwargs)):  # type: ignore[arg-type]
        click.echo(line)


def _importable(name: str) -> bool:
    """Whether ``name`` can be imported (found, not loaded)."""
    import importlib.util

    return importlib.util.find_spec(name) is not None


def main(argv: list[str] | None = None) -> int:
    """Console entry point: people-facing errors as one line on stderr and exit status 2 (or 1)."""
    missing = [name for name in ("flask", "granian", "prometheus_client", "cryptography") if not _importable(name)]
    if missing:
        click.echo(f"error: the webhook needs {', '.join(missing)}: install it with pip install 'kubectl-dra[webhook]'",
                   err=True)
        return 2
    try:
        cli.main(args=argv, prog_name="dra-webhook", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 1
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except DraError as exc:
        click.echo(f"error: {exc}", err=True)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
