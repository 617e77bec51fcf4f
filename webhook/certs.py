"""``dra-webhook certs``: a CA and a serving certificate for the webhook, kept valid idempotently.

:func:`ensure_bundle` is the pure part: given what is stored (maybe nothing), it keeps
every certificate that is still good and replaces only what is missing, broken,
mismatched or close to expiry. A replaced CA stays in the CA bundle until it expires,
so the API server trusts both the old and the new serving certificate during a
rotation. The stores are files in a directory or two Secrets (the TLS Secret the
pods mount, the CA Secret only the cert job reads); the CA bundle is then written into
every webhook of the named Validating/MutatingWebhookConfigurations.
"""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import json
import os
import re
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from urllib3.util.retry import Retry

from kubectl_dra.errors import ClusterAccessError, UsageError

from .kubeclient import ClusterConfigError, client_configuration, one_line

#: File / Secret data keys.
TLS_CERT, TLS_KEY, CA_CERT, CA_KEY = "tls.crt", "tls.key", "ca.crt", "ca.key"

_BACKDATE = dt.timedelta(minutes=5)  # tolerate clock skew between nodes

#: Seconds one API request of the cert job may take (connect and read).
REQUEST_TIMEOUT = 15


@dataclass(frozen=True)
class Bundle:
    """PEM texts: the current CA (``ca_cert`` may hold older CAs after it), its key, and the serving pair."""

    ca_cert: bytes = b""
    ca_key: bytes = b""
    tls_cert: bytes = b""
    tls_key: bytes = b""

    @classmethod
    def from_mapping(cls, data: dict[str, bytes]) -> "Bundle":
        return cls(data.get(CA_CERT, b""), data.get(CA_KEY, b""), data.get(TLS_CERT, b""), data.get(TLS_KEY, b""))

    def as_mapping(self) -> dict[str, bytes]:
        return {CA_CERT: self.ca_cert, CA_KEY: self.ca_key, TLS_CERT: self.tls_cert, TLS_KEY: self.tls_key}


@dataclass(frozen=True)
class Policy:
    """Names and lifetimes of the certificates."""

    dns_names: tuple[str, ...]
    ip_addresses: tuple[str, ...] = ()
    validity: dt.timedelta = dt.timedelta(days=365)
    ca_validity: dt.timedelta = dt.timedelta(days=5 * 365)
    renew_before: dt.timedelta = dt.timedelta(days=30)


@dataclass(frozen=True)
class Outcome:
    """What :func:`ensure_bundle` did and why."""

    bundle: Bundle
    ca_action: str  # "kept" | "created" | "renewed"
    cert_action: str  # "kept" | "created" | "renewed"
    reason: str
    #: Stored material replaced for another reason than being absent or close to expiry
    #: (unreadable, mismatched, other names): the caller replaces it only when forced.
    overwrites: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return self.ca_action != "kept" or self.cert_action != "kept"


def service_dns_names(service: str, namespace: str) -> tuple[str, ...]:
    """The names the API server may use to reach the Service."""
    return (service, f"{service}.{namespace}", f"{service}.{namespace}.svc", f"{service}.{namespace}.svc.cluster.local")


def ensure_bundle(stored: Bundle, policy: Policy, now: dt.datetime | None = None) -> Outcome:
    """Keep what is good in ``stored``; create or renew the rest."""
    now = now or dt.datetime.now(dt.UTC)
    ca_pair, ca_problem = _usable_ca(stored, policy, now)
    reasons: list[str] = []
    overwrites: list[str] = []
    ca_action = "kept"
    if ca_pair is None:
        ca_action = "renewed" if stored.ca_cert or stored.ca_key else "created"
        reasons.append(f"CA: {ca_problem}")
        if ca_action == "renewed" and not ca_problem.startswith("expires"):
            overwrites.append(f"CA: {ca_problem}")
        ca_pair = _new_ca(policy, now)
    ca_cert, ca_key = ca_pair
    cert_problem = None if ca_action != "kept" else _serving_problem(stored, ca_cert, policy, now)
    cert_action = "kept"
    tls_cert, tls_key = stored.tls_cert, stored.tls_key
    if ca_action != "kept" or cert_problem:
        cert_action = "renewed" if stored.tls_cert or stored.tls_key else "created"
        reasons.append(f"serving certificate: {cert_problem or 'new CA'}")
        if cert_action == "renewed" and cert_problem and not cert_problem.startswith("expires"):
            overwrites.append(f"serving certificate: {cert_problem}")
        tls_cert, tls_key = _new_serving(ca_cert, ca_key, policy, now)
    bundle_pem = _ca_bundle(ca_cert, stored.ca_cert, now)
    bundle = Bundle(bundle_pem, _key_pem(ca_key), tls_cert, tls_key)
    if ca_action == "kept":
        bundle = replace(bundle, ca_key=stored.ca_key)
    return Outcome(bundle, ca_action, cert_action, "; ".join(reasons) or "certificates are valid", tuple(overwrites))


def _same_key(cert: x509.Certificate, key: Any) -> bool:
    """Whether ``key`` is the private half of the certificate's public key (any key type)."""
    der, spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    return bool(cert.public_key().public_bytes(der, spki) == key.public_key().public_bytes(der, spki))


def _usable_ca(stored: Bundle, policy: Policy, now: dt.datetime) -> tuple[tuple[x509.Certificate, Any] | None, str]:
    """The stored CA and key if they can go on signing, else why not."""
    if not stored.ca_cert or not stored.ca_key:
        return None, "missing"
    try:
        certs = x509.load_pem_x509_certificates(stored.ca_cert)
        key = serialization.load_pem_private_key(stored.ca_key, password=None)
    except ValueError as exc:
        return None, f"unreadable ({exc})"
    cert = certs[0]
    if not _same_key(cert, key):
        return None, "key does not match"
    try:
        constraints = cert.extensions.get_extension_for_class(x509.BasicConstraints).value
    except x509.ExtensionNotFound:
        return None, "not a CA certificate"
    if not constraints.ca:
        return None, "not a CA certificate"
    if cert.not_valid_after_utc - policy.renew_before <= now:
        return None, f"expires {cert.not_valid_after_utc:%Y-%m-%d}"
    return (cert, key), ""


def _serving_problem(stored: Bundle, ca_cert: x509.Certificate, policy: Policy, now: dt.datetime) -> str | None:
    """Why the stored serving certificate cannot be kept, or None."""
    if not stored.tls_cert or not stored.tls_key:
        return "missing"
    try:
        cert = x509.load_pem_x509_certificate(stored.tls_cert)
        key = serialization.load_pem_private_key(stored.tls_key, password=None)
    except ValueError as exc:
        return f"unreadable ({exc})"
    if not _same_key(cert, key):
        return "key does not match"
    try:
        cert.verify_directly_issued_by(ca_cert)
    except (ValueError, TypeError, InvalidSignature):
        return "not issued by the current CA"
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = sans.get_values_for_type(x509.DNSName) + [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)]
    except x509.ExtensionNotFound:
        names = []
    wanted = set(policy.dns_names) | {str(ipaddress.ip_address(ip)) for ip in policy.ip_addresses}
    if set(names) != wanted:
        extra, missing = sorted(set(names) - wanted), sorted(wanted - set(names))
        return "names differ (" + "; ".join(
            ([f"not wanted: {', '.join(extra)}"] if extra else []) + ([f"missing: {', '.join(missing)}"] if missing else [])
        ) + ")"
    if cert.not_valid_after_utc - policy.renew_before <= now:
        return f"expires {cert.not_valid_after_utc:%Y-%m-%d}"
    return None


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: Any) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _new_ca(policy: Policy, now: dt.datetime) -> tuple[x509.Certificate, Any]:
    """A self-signed CA that may sign only leaf certificates."""
    key = _new_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"dra-webhook-ca@{int(now.timestamp())}")])
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(now + policy.ca_validity)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(ski, critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _new_serving(ca_cert: x509.Certificate, ca_key: Any, policy: Policy, now: dt.datetime) -> tuple[bytes, bytes]:
    """A serving certificate for the Service's DNS names, signed by the CA."""
    key = _new_key()
    not_after = min(now + policy.validity, ca_cert.not_valid_after_utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, policy.dns_names[0])]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(not_after)
        .add_extension(x509.SubjectAlternativeName(
            [x509.DNSName(n) for n in policy.dns_names]
            + [x509.IPAddress(ipaddress.ip_address(ip)) for ip in policy.ip_addresses]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_cert.public_key()),  # type: ignore[arg-type]  # a CA key signs: never X25519/X448/ML-KEM
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return _cert_pem(cert), _key_pem(key)


def _ca_bundle(current: x509.Certificate, stored_bundle: bytes, now: dt.datetime) -> bytes:
    """The current CA first, then every other stored CA that has not expired (for a smooth rotation)."""
    pems = [_cert_pem(current)]
    try:
        previous = x509.load_pem_x509_certificates(stored_bundle) if stored_bundle else []
    except ValueError:
        previous = []
    for cert in previous:
        pem = _cert_pem(cert)
        if pem not in pems and cert.not_valid_after_utc > now:
            pems.append(pem)
    return b"".join(pems)


# --- stores -----------------------------------------------------------------------------------


def read_dir(directory: Path) -> Bundle:
    """The bundle stored as files in ``directory`` (missing files read as empty)."""
    def read(name: str) -> bytes:
        path = directory / name
        return path.read_bytes() if path.is_file() else b""

    return Bundle(read(CA_CERT), read(CA_KEY), read(TLS_CERT), read(TLS_KEY))


def write_dir(directory: Path, bundle: Bundle) -> None:
    """Write each file atomically (temp file + rename); keys readable by the owner only.

    The key is written before the certificate so that a server reloading between the
    two renames sees a mismatched pair (which it refuses) rather than a stale one.
    """
    directory.mkdir(parents=True, exist_ok=True)
    for name, data, mode in ((CA_KEY, bundle.ca_key, 0o600), (CA_CERT, bundle.ca_cert, 0o644),
                             (TLS_KEY, bundle.tls_key, 0o600), (TLS_CERT, bundle.tls_cert, 0o644)):
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.")
        try:
            os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, directory / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


class SecretStore:
    """The bundle in two Secrets: ``tls_secret`` (kubernetes.io/tls, mounted by the pods) and ``ca_secret``."""

    def __init__(self, core_api: Any, namespace: str, tls_secret: str, ca_secret: str) -> None:
        self.api = core_api
        self.namespace = namespace
        self.tls_secret = tls_secret
        self.ca_secret = ca_secret
        self._versions: dict[str, dict | None] = {}

    def read(self) -> Bundle:
        """Both Secrets' data (missing Secrets read as empty)."""
        tls = self._get(self.tls_secret)
        ca = self._get(self.ca_secret)
        return Bundle(ca.get(CA_CERT, b""), ca.get(CA_KEY, b""), tls.get(TLS_CERT, b""), tls.get(TLS_KEY, b""))

    def write(self, bundle: Bundle) -> None:
        """Create or update both Secrets (CA first: it must exist before anything it signed)."""
        self._put(self.ca_secret, "Opaque", {CA_CERT: bundle.ca_cert, CA_KEY: bundle.ca_key})
        self._put(self.tls_secret, "kubernetes.io/tls",
                  {TLS_CERT: bundle.tls_cert, TLS_KEY: bundle.tls_key, CA_CERT: bundle.ca_cert})

    def _get(self, name: str) -> dict[str, bytes]:
        from kubernetes.client.exceptions import ApiException

        try:
            secret = self.api.read_namespaced_secret(name, self.namespace, _request_timeout=REQUEST_TIMEOUT)
        except ApiException as exc:
            if exc.status == 404:
                self._versions[name] = None
                return {}
            raise ClusterAccessError(f"reading Secret {self.namespace}/{name} failed: HTTP {exc.status} {exc.reason}") from None
        except Exception as exc:  # connection refused, DNS, TLS, timeouts: urllib3 and OS errors
            raise ClusterAccessError(f"reading Secret {self.namespace}/{name} failed: {one_line(exc)}") from None
        self._versions[name] = {"resourceVersion": secret.metadata.resource_version}
        return {k: base64.b64decode(v) for k, v in (secret.data or {}).items()}

    def _put(self, name: str, secret_type: str, data: dict[str, bytes]) -> None:
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        encoded: dict[str, bytes | str] = {k: base64.b64encode(v).decode("ascii") for k, v in data.items()}
        known = self._versions.get(name)
        metadata = client.V1ObjectMeta(
            name=name, namespace=self.namespace,
            labels={"app.kubernetes.io/name": "dra-webhook", "app.kubernetes.io/component": "certificates"},
            resource_version=known["resourceVersion"] if known else None,
        )
        body = client.V1Secret(metadata=metadata, type=secret_type, data=encoded)
        try:
            if known is None:
                self.api.create_namespaced_secret(self.namespace, body, _request_timeout=REQUEST_TIMEOUT)
            else:
                self.api.replace_namespaced_secret(name, self.namespace, body, _request_timeout=REQUEST_TIMEOUT)
        except ApiException as exc:
            raise ClusterAccessError(
                f"writing Secret {self.namespace}/{name} failed: HTTP {exc.status} {exc.reason}"
                + (" (changed concurrently; run again)" if exc.status == 409 else "")
            ) from None
        except Exception as exc:  # connection refused, DNS, TLS, timeouts: urllib3 and OS errors
            raise ClusterAccessError(f"writing Secret {self.namespace}/{name} failed: {one_line(exc)}") from None


def inject_ca_bundle(admission_api: Any, ca_bundle: bytes, validating: list[str], mutating: list[str]) -> list[str]:
    """Set ``clientConfig.caBundle`` of every webhook in the named configurations; returns what changed."""
    from kubernetes.client.exceptions import ApiException

    encoded = base64.b64encode(ca_bundle).decode("ascii")
    changed: list[str] = []
    targets: list[tuple[str, str, Callable[..., Any], Callable[..., Any]]] = [
        ("ValidatingWebhookConfiguration", n, admission_api.read_validating_webhook_configuration,
         admission_api.patch_validating_webhook_configuration) for n in validating
    ] + [
        ("MutatingWebhookConfiguration", n, admission_api.read_mutating_webhook_configuration,
         admission_api.patch_mutating_webhook_configuration) for n in mutating
    ]
    for kind, name, read, patch in targets:
        try:
            raw = read(name, _preload_content=False, _request_timeout=REQUEST_TIMEOUT)
            config = json.loads(raw.data)
            ops: list[dict[str, Any]] = []
            for i, hook in enumerate(config.get("webhooks") or []):
                if (hook.get("clientConfig") or {}).get("caBundle") == encoded:
                    continue
                ops.append({"op": "test", "path": f"/webhooks/{i}/name", "value": hook.get("name")})
                ops.append({"op": "add", "path": f"/webhooks/{i}/clientConfig/caBundle", "value": encoded})
            if ops:
                patch(name, ops, _preload_content=False, _request_timeout=REQUEST_TIMEOUT)
                changed.append(f"{kind}/{name}")
        except ApiException as exc:
            raise ClusterAccessError(f"updating the caBundle of {kind} {name} failed: HTTP {exc.status} {exc.reason}") from None
        except Exception as exc:  # connection refused, DNS, TLS, timeouts, a body that is not JSON
            raise ClusterAccessError(f"updating the caBundle of {kind} {name} failed: {one_line(exc)}") from None
    return changed


@dataclass(frozen=True)
class CertsOptions:
    """Everything ``dra-webhook certs`` takes."""

    service: str
    namespace: str
    out_dir: str | None = None
    secret: str | None = None
    ca_secret: str | None = None
    validating_webhooks: tuple[str, ...] = ()
    mutating_webhooks: tuple[str, ...] = ()
    validity_days: float = 365
    ca_validity_days: float = 5 * 365
    renew_before_days: float = 30
    kubeconfig: str | None = None
    kube_context: str | None = None
    dns_names: tuple[str, ...] = ()
    ip_addresses: tuple[str, ...] = ()
    force: bool = False


def run(options: CertsOptions, now: dt.datetime | None = None) -> list[str]:
    """Ensure the certificates in every requested store and the CA bundle in the webhooks; returns report lines."""
    if not options.out_dir and not options.secret:
        raise UsageError("give --out-dir DIR and/or --secret NAME: where to keep the certificates")
    if options.renew_before_days >= options.validity_days:
        raise UsageError("--renew-before-days must be shorter than --validity-days")
    policy = Policy(
        dns_names=_unique(service_dns_names(options.service, options.namespace)
                          + tuple(_checked_dns_name(n) for n in options.dns_names)),
        ip_addresses=_unique(tuple(_checked_ip(ip) for ip in options.ip_addresses)),
        validity=dt.timedelta(days=options.validity_days),
        ca_validity=dt.timedelta(days=options.ca_validity_days),
        renew_before=dt.timedelta(days=options.renew_before_days),
    )
    report: list[str] = []
    bundle: Bundle | None = None
    needs_cluster = bool(options.secret or options.validating_webhooks or options.mutating_webhooks)
    api_client = _api_client(options) if needs_cluster else None
    if options.secret:
        from kubernetes import client

        where = f"Secret {options.namespace}/{options.secret}"
        store = SecretStore(client.CoreV1Api(api_client), options.namespace, options.secret,
                            options.ca_secret or f"{options.secret}-ca")
        outcome = ensure_bundle(store.read(), policy, now)
        _refuse_overwrite(where, outcome, options.force)
        if outcome.changed:
            store.write(outcome.bundle)
        report.append(_describe(where, outcome))
        bundle = outcome.bundle
    if options.out_dir:
        directory = Path(options.out_dir)
        where = f"directory {directory}"
        stored = _read_dir(directory)
        if bundle is not None:  # the Secret is the source of truth; mirror it
            outcome = Outcome(bundle, "kept", "kept", "copied from the Secret")
            if stored != bundle:
                foreign = stored != Bundle() and not _same_lineage(stored, bundle)
                replaced = ("files that are not an earlier copy of the Secret",) if foreign else ()
                outcome = Outcome(bundle, "copied", "copied", "copied from the Secret", replaced)
        else:
            outcome = ensure_bundle(stored, policy, now)
        _refuse_overwrite(where, outcome, options.force)
        if outcome.changed:
            _write_dir(directory, outcome.bundle)
        report.append(_describe(where, outcome))
        bundle = outcome.bundle
    if options.validating_webhooks or options.mutating_webhooks:
        from kubernetes import client

        assert bundle is not None
        changed = inject_ca_bundle(client.AdmissionregistrationV1Api(api_client), bundle.ca_cert,
                                   list(options.validating_webhooks), list(options.mutating_webhooks))
        names = [f"ValidatingWebhookConfiguration/{n}" for n in options.validating_webhooks]
        names += [f"MutatingWebhookConfiguration/{n}" for n in options.mutating_webhooks]
        for name in names:
            report.append(f"{name}: caBundle {'updated' if name in changed else 'already current'}")
    return report


def _same_lineage(stored: Bundle, current: Bundle) -> bool:
    """True when ``stored`` was issued by a CA that ``current`` still trusts (an earlier copy of it)."""
    try:
        stored_ca = x509.load_pem_x509_certificates(stored.ca_cert)[0]
        trusted = x509.load_pem_x509_certificates(current.ca_cert)
    except (ValueError, IndexError):
        return False
    return stored_ca in trusted


def _refuse_overwrite(where: str, outcome: Outcome, force: bool) -> None:
    """Stored certificates are replaced unasked only when absent or close to expiry; anything else needs --force."""
    if outcome.overwrites and not force:
        raise UsageError(f"{where}: {'; '.join(outcome.overwrites)}; "
                         "refusing to replace the stored certificates (use --force to replace them)")


def _read_dir(directory: Path) -> Bundle:
    """:func:`read_dir` with file-system problems as one usage error."""
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--out-dir {directory}: not a directory")
    try:
        return read_dir(directory)
    except OSError as exc:
        raise UsageError(f"--out-dir {directory}: cannot read the certificates: {exc.strerror or exc}") from None


def _write_dir(directory: Path, bundle: Bundle) -> None:
    """:func:`write_dir` with file-system problems as one usage error."""
    try:
        write_dir(directory, bundle)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(directory) else ""
        raise UsageError(f"--out-dir {directory}: cannot write the certificates{where}: {exc.strerror or exc}") from None


_DNS_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")


def _checked_dns_name(name: str) -> str:
    """A ``--dns`` value: a lower-case DNS name (RFC 1123), optionally ``*.`` in front."""
    labels = name.split(".")
    if labels and labels[0] == "*":
        labels = labels[1:]
    if not labels or len(name) > 253 or not all(_DNS_LABEL.fullmatch(label) for label in labels):
        raise UsageError(f"--dns {name!r}: not a DNS name (lower-case letters, digits, '-' and '.'; "
                         "optionally '*.' in front)")
    return name


def _checked_ip(value: str) -> str:
    """An ``--ip`` value: an IPv4 or IPv6 address, normalized."""
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise UsageError(f"--ip {value!r}: not an IPv4 or IPv6 address") from None


def _unique(values: tuple[str, ...]) -> tuple[str, ...]:
    """``values`` without repeats, in order."""
    return tuple(dict.fromkeys(values))




def _describe(where: str, outcome: Outcome) -> str:
    """One report line: what happened to the CA and the serving certificate, and why."""
    cert = x509.load_pem_x509_certificate(outcome.bundle.tls_cert)
    return (f"{where}: CA {outcome.ca_action}, serving certificate {outcome.cert_action} "
            f"(valid until {cert.not_valid_after_utc:%Y-%m-%d}; {outcome.reason})")


def _api_client(options: CertsOptions) -> Any:
    """A kubernetes ApiClient: in-cluster when running in a pod, else from the kubeconfig."""
    from kubernetes import client

    try:
        configuration = client_configuration(options.kubeconfig, options.kube_context)
    except ClusterConfigError as exc:
        raise ClusterAccessError(str(exc)) from None
    # One retry of a failed connect; each request is bounded by REQUEST_TIMEOUT.
    configuration.retries = Retry(total=1, connect=1, read=0, redirect=0, status=0, other=0)
    return client.ApiClient(configuration)
