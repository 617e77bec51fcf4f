"""``dra-webhook certs``: creation, idempotence, renewal before expiry, CA rotation with an
overlapping bundle, the file store, and the Secret store + caBundle injection through the real
``kubernetes`` client against a small writable fake API server."""

from __future__ import annotations

import base64
import copy
import datetime as dt
import json
import ssl
import stat
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import yaml
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from webhook import certs
from webhook.certs import Bundle, Policy, ensure_bundle, service_dns_names
from webhook.cli import main
from webhook.tls import build_context

NOW = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.UTC)
NAMES = service_dns_names("dra-webhook", "dra-system")
POLICY = Policy(dns_names=NAMES)


def leaf(bundle: Bundle) -> x509.Certificate:
    return x509.load_pem_x509_certificate(bundle.tls_cert)


def cas(bundle: Bundle) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(bundle.ca_cert)


def verify_chain(bundle: Bundle) -> None:
    """The serving certificate is signed by the bundle's current CA and fits its key."""
    cert = leaf(bundle)
    cert.verify_directly_issued_by(cas(bundle)[0])
    build_context_from(bundle)


def build_context_from(bundle: Bundle, tmp: Path | None = None) -> ssl.SSLContext:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        certs.write_dir(Path(d), bundle)
        return build_context(str(Path(d) / "tls.crt"), str(Path(d) / "tls.key"))


def test_creates_ca_and_serving_certificate() -> None:
    outcome = ensure_bundle(Bundle(), POLICY, NOW)
    assert (outcome.ca_action, outcome.cert_action) == ("created", "created")
    bundle = outcome.bundle
    verify_chain(bundle)
    cert = leaf(bundle)
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)
    assert set(sans) == set(NAMES) and "dra-webhook.dra-system.svc" in sans
    assert ExtendedKeyUsageOID.SERVER_AUTH in cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    ca = cas(bundle)[0]
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert cert.not_valid_after_utc - NOW == dt.timedelta(days=365)
    assert len(cas(bundle)) == 1


def test_second_run_keeps_everything_byte_for_byte() -> None:
    first = ensure_bundle(Bundle(), POLICY, NOW).bundle
    again = ensure_bundle(first, POLICY, NOW + dt.timedelta(days=100))
    assert not again.changed
    assert again.bundle == first


def test_serving_certificate_renewed_before_expiry_with_the_same_ca() -> None:
    first = ensure_bundle(Bundle(), POLICY, NOW).bundle
    expiry = leaf(first).not_valid_after_utc
    kept = ensure_bundle(first, POLICY, expiry - dt.timedelta(days=31))
    assert not kept.changed
    renewed = ensure_bundle(first, POLICY, expiry - dt.timedelta(days=29))
    assert (renewed.ca_action, renewed.cert_action) == ("kept", "renewed")
    assert "expires" in renewed.reason
    assert renewed.bundle.ca_cert == first.ca_cert and renewed.bundle.ca_key == first.ca_key
    assert leaf(renewed.bundle).not_valid_after_utc > expiry
    verify_chain(renewed.bundle)


def test_ca_rotation_keeps_the_old_ca_in_the_bundle_until_it_expires() -> None:
    first = ensure_bundle(Bundle(), POLICY, NOW).bundle
    old_ca = cas(first)[0]
    near_end = old_ca.not_valid_after_utc - dt.timedelta(days=10)
    rotated = ensure_bundle(first, POLICY, near_end)
    assert (rotated.ca_action, rotated.cert_action) == ("renewed", "renewed")
    bundle_cas = cas(rotated.bundle)
    assert len(bundle_cas) == 2 and bundle_cas[1] == old_ca and bundle_cas[0] != old_ca
    verify_chain(rotated.bundle)
    later = ensure_bundle(rotated.bundle, POLICY, old_ca.not_valid_after_utc + dt.timedelta(days=1))
    assert not later.changed or later.ca_action == "kept"
    assert cas(later.bundle) == [bundle_cas[0]]


@pytest.mark.parametrize("damage", ["tls_key", "tls_cert", "ca_key", "names", "foreign_leaf"])
def test_broken_or_mismatched_material_is_replaced(damage: str) -> None:
    good = ensure_bundle(Bundle(), POLICY, NOW).bundle
    other = ensure_bundle(Bundle(), POLICY, NOW).bundle
    policy = POLICY
    if damage == "tls_key":
        stored = Bundle(good.ca_cert, good.ca_key, good.tls_cert, other.tls_key)
    elif damage == "tls_cert":
        stored = Bundle(good.ca_cert, good.ca_key, b"-----BEGIN CERTIFICATE-----\ngarbage\n", good.tls_key)
    elif damage == "ca_key":
        stored = Bundle(good.ca_cert, other.ca_key, good.tls_cert, good.tls_key)
    elif damage == "names":
        stored = good
        policy = Policy(dns_names=service_dns_names("other-service", "dra-system"))
    else:  # a serving pair issued by another CA
        stored = Bundle(good.ca_cert, good.ca_key, other.tls_cert, other.tls_key)
    outcome = ensure_bundle(stored, policy, NOW)
    assert outcome.cert_action == "renewed"
    verify_chain(outcome.bundle)
    if damage == "ca_key":
        assert outcome.ca_action == "renewed"
    else:
        assert outcome.ca_action == "kept" and outcome.bundle.ca_key == good.ca_key


def test_cli_file_store_is_idempotent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tls"
    assert main(["certs", "--service", "dra-webhook", "-n", "dra-system", "--out-dir", str(out)]) == 0
    assert "CA created, serving certificate created" in capsys.readouterr().out
    files = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(files) == {"ca.crt", "ca.key", "tls.crt", "tls.key"}
    assert stat.S_IMODE((out / "tls.key").stat().st_mode) == 0o600
    assert stat.S_IMODE((out / "ca.key").stat().st_mode) == 0o600
    mtimes = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    assert main(["certs", "--service", "dra-webhook", "-n", "dra-system", "--out-dir", str(out)]) == 0
    assert "CA kept, serving certificate kept" in capsys.readouterr().out
    assert {p.name: p.read_bytes() for p in out.iterdir()} == files
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == mtimes
    verify_chain(certs.read_dir(out))


def test_cli_needs_a_store(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certs", "--service", "x"]) == 2
    assert "--out-dir" in capsys.readouterr().err


# --- Secret store and caBundle injection through the kubernetes client -------------------------


class WritableAPI:
    """Just enough of the API server for the cert job: Secrets in one namespace and the two
    webhook configuration kinds (get, create, update with resourceVersion checks, JSON patch)."""

    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.lock = threading.Lock()
        self.rv = 100
        self.store: dict[str, dict[str, Any]] = {}
        self.requests: list[tuple[str, str]] = []
        for obj in objects:
            self._put(self._path_of(obj), obj)
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                status, payload = api.handle(self.command, self.path.split("?")[0], body,
                                             self.headers.get("Content-Type", ""))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = _answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def kubeconfig(self, path: Path) -> Path:
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": "fake",
            "clusters": [{"name": "fake", "cluster": {"server": f"http://127.0.0.1:{self.httpd.server_address[1]}"}}],
            "users": [{"name": "fake", "user": {"token": "t"}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
        }
        path.write_text(yaml.safe_dump(config))
        return path

    @staticmethod
    def _path_of(obj: dict[str, Any]) -> str:
        kind, name = obj["kind"], obj["metadata"]["name"]
        if kind == "Secret":
            return f"/api/v1/namespaces/{obj['metadata']['namespace']}/secrets/{name}"
        return f"/apis/admissionregistration.k8s.io/v1/{kind.lower()}s/{name}"

    def _put(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        self.rv += 1
        stored = copy.deepcopy(obj)
        stored["metadata"]["resourceVersion"] = str(self.rv)
        self.store[path] = stored
        return stored

    def get(self, path: str) -> dict[str, Any]:
        return copy.deepcopy(self.store[path])

    def handle(self, method: str, path: str, body: bytes, content_type: str) -> tuple[int, Any]:
        with self.lock:
            self.requests.append((method, path))
            obj = json.loads(body) if body else None
            if method == "GET":
                return (200, self.store[path]) if path in self.store else (404, _status(404, "not found"))
            if method == "POST":
                obj.setdefault("kind", "Secret")
                obj.setdefault("apiVersion", "v1")
                target = f"{path}/{obj['metadata']['name']}"
                if target in self.store:
                    return 409, _status(409, "already exists")
                return 201, self._put(target, obj)
            if path not in self.store:
                return 404, _status(404, "not found")
            current = self.store[path]
            if method == "PUT":
                if obj["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]:
                    return 409, _status(409, "the object has been modified")
                obj.setdefault("kind", current["kind"])
                obj.setdefault("apiVersion", current["apiVersion"])
                return 200, self._put(path, obj)
            if method == "PATCH":
                assert content_type.startswith("application/json-patch+json"), content_type
                try:
                    patched = jsonpatch.apply_patch(current, obj)
                except jsonpatch.JsonPatchException as exc:
                    return 422, _status(422, str(exc))
                return 200, self._put(path, patched)
        return 405, _status(405, "method not allowed")


def _status(code: int, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "message": message}


def _webhook_config(kind: str) -> dict[str, Any]:
    hook = {"name": "x", "clientConfig": {"service": {"name": "dra-webhook", "namespace": "dra-system"}},
            "sideEffects": "None", "admissionReviewVersions": ["v1"]}
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": "dra-webhook"},
            "webhooks": [dict(copy.deepcopy(hook), name="a.dra-webhook.kubectl-dra.io"),
                         dict(copy.deepcopy(hook), name="b.dra-webhook.kubectl-dra.io")]}


@pytest.fixture
def api() -> Any:
    server = WritableAPI([_webhook_config("ValidatingWebhookConfiguration"),
                          _webhook_config("MutatingWebhookConfiguration")])
    yield server
    server.close()


CERTS_ARGS = ["certs", "--service", "dra-webhook", "-n", "dra-system", "--secret", "dra-webhook-tls",
              "--validating-webhook", "dra-webhook", "--mutating-webhook", "dra-webhook"]

SECRET = "/api/v1/namespaces/dra-system/secrets/dra-webhook-tls"
CA_SECRET = "/api/v1/namespaces/dra-system/secrets/dra-webhook-tls-ca"
VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/dra-webhook"
MWC = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/dra-webhook"


def test_secret_store_and_ca_bundle_injection(api: WritableAPI, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    kubeconfig = str(api.kubeconfig(tmp_path / "kubeconfig"))
    assert main(CERTS_ARGS + ["--kubeconfig", kubeconfig]) == 0
    out = capsys.readouterr().out
    assert "CA created, serving certificate created" in out and out.count("caBundle updated") == 2
    tls = api.get(SECRET)
    ca = api.get(CA_SECRET)
    assert tls["type"] == "kubernetes.io/tls" and set(tls["data"]) == {"tls.crt", "tls.key", "ca.crt"}
    assert set(ca["data"]) == {"ca.crt", "ca.key"}
    assert "ca.key" not in tls["data"], "the mounted Secret must not carry the CA key"
    decoded = {k: base64.b64decode(v) for k, v in {**ca["data"], **tls["data"]}.items()}
    bundle = Bundle.from_mapping(decoded)
    verify_chain(bundle)
    for path in (VWC, MWC):
        for hook in api.get(path)["webhooks"]:
            assert base64.b64decode(hook["clientConfig"]["caBundle"]) == bundle.ca_cert
            assert hook["clientConfig"]["service"]["name"] == "dra-webhook"

    # Idempotent: a second run reads but writes nothing.
    api.requests.clear()
    assert main(CERTS_ARGS + ["--kubeconfig", kubeconfig]) == 0
    out = capsys.readouterr().out
    assert "CA kept, serving certificate kept" in out and out.count("caBundle already current") == 2
    assert {m for m, _ in api.requests} == {"GET"}
    assert api.get(SECRET)["data"] == tls["data"]


def test_cert_job_stays_within_its_rbac(api: WritableAPI, tmp_path: Path) -> None:
    """Every request the job makes is allowed by deploy/base/rbac.yaml: get/update/patch of its two Secrets by
    name, create of Secrets in its namespace, get/patch of the two webhook configurations by name."""
    kubeconfig = str(api.kubeconfig(tmp_path / "kubeconfig"))
    assert main(CERTS_ARGS + ["--kubeconfig", kubeconfig]) == 0
    # force a renewal so that updates happen too
    secret = api.get(SECRET)
    secret["data"]["tls.key"] = base64.b64encode(b"broken").decode()
    api.store[SECRET] = secret
    assert main(CERTS_ARGS + ["--kubeconfig", kubeconfig, "--force"]) == 0
    allowed = {("GET", SECRET), ("PUT", SECRET), ("GET", CA_SECRET), ("PUT", CA_SECRET),
               ("POST", "/api/v1/namespaces/dra-system/secrets"), ("GET", VWC), ("PATCH", VWC), ("GET", MWC),
               ("PATCH", MWC)}
    assert set(api.requests) <= allowed, set(api.requests) - allowed
    assert ("PUT", SECRET) in api.requests


def test_unreachable_cluster_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(CERTS_ARGS + ["--kubeconfig", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no usable cluster configuration") and "Traceback" not in err


def test_broken_secret_is_replaced_only_with_force(api: WritableAPI, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    kubeconfig = str(api.kubeconfig(tmp_path / "kubeconfig"))
    assert main(CERTS_ARGS + ["--kubeconfig", kubeconfig]) == 0
    secret = api.get(SECRET)
    secret["data"]["tls.key"] = base64.b64encode(b"broken").decode()
    api.store[SECRET] = secret
    capsys.readouterr()
    api.requests.clear()
    assert main(CERTS_ARGS + ["--kubeconfig", kubeconfig]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refusing to replace" in err and "--force" in err and "Traceback" not in err
    assert {m for m, _ in api.requests} == {"GET"}, "nothing is written without --force"
    assert main(CERTS_ARGS + ["--kubeconfig", kubeconfig, "--force"]) == 0
    assert "serving certificate renewed" in capsys.readouterr().out


def test_unreachable_api_server_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A kubeconfig whose server refuses connections: one error line naming what failed, exit 2."""
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
              "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
              "users": [{"name": "u", "user": {"token": "t"}}],
              "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    assert main(CERTS_ARGS + ["--kubeconfig", str(kubeconfig)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: reading Secret dra-system/dra-webhook-tls failed:") and err.count("\n") == 1
    assert "Traceback" not in err and "refused" in err.lower()


@pytest.mark.parametrize("where", ["file", "under_a_file"])
def test_bad_out_dir_is_one_line_and_exit_2(where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    out = blocker if where == "file" else blocker / "tls"
    assert main(["certs", "--out-dir", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --out-dir {out}:") and err.count("\n") == 1 and "Traceback" not in err
    assert blocker.read_text() == "not a directory"


def test_local_names_and_addresses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--dns and --ip add names for local use; a TLS client verifying 127.0.0.1 or localhost accepts it."""
    import ipaddress

    out = tmp_path / "tls"
    args = ["certs", "--out-dir", str(out), "--dns", "localhost", "--ip", "127.0.0.1", "--ip", "::1"]
    assert main(args) == 0
    sans = leaf(certs.read_dir(out)).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(sans.get_values_for_type(x509.DNSName)) == set(NAMES) | {"localhost"}
    assert set(sans.get_values_for_type(x509.IPAddress)) == {ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")}
    assert main(args) == 0
    assert "serving certificate kept" in capsys.readouterr().out


def test_other_names_need_force_and_then_replace_the_certificate(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tls"
    assert main(["certs", "--out-dir", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    assert main(["certs", "--out-dir", str(out), "--ip", "127.0.0.1"]) == 2
    err = capsys.readouterr().err
    assert "names differ (missing: 127.0.0.1)" in err and "--force" in err and err.count("\n") == 1
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert main(["certs", "--out-dir", str(out), "--ip", "127.0.0.1", "--force"]) == 0
    assert "CA kept, serving certificate renewed" in capsys.readouterr().out
    after = certs.read_dir(out)
    assert after.ca_cert == before["ca.crt"] and after.tls_cert != before["tls.crt"]


@pytest.mark.parametrize("args", [["--ip", "1.2.3"], ["--ip", "localhost"], ["--dns", "Bad_Name"], ["--dns", "a..b"]])
def test_bad_names_are_usage_errors(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certs", "--out-dir", str(tmp_path / "tls"), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {args[0]} ") and err.count("\n") == 1
    assert not (tmp_path / "tls").exists()


def test_expiry_renewal_needs_no_force() -> None:
    """What the weekly job does unattended: renew a serving certificate close to expiry."""
    first = ensure_bundle(Bundle(), POLICY, NOW).bundle
    renewed = ensure_bundle(first, POLICY, leaf(first).not_valid_after_utc - dt.timedelta(days=1))
    assert renewed.cert_action == "renewed" and not renewed.overwrites


def test_out_dir_mirror_follows_the_secret_but_never_clobbers_foreign_files(
        api: WritableAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kubeconfig = str(api.kubeconfig(tmp_path / "kubeconfig"))
    mirror = tmp_path / "mirror"
    assert main(CERTS_ARGS + ["--kubeconfig", kubeconfig, "--out-dir", str(mirror)]) == 0
    # the Secret's serving certificate is renewed (same CA): the mirror follows without --force
    secret = api.get(SECRET)
    secret["data"]["tls.key"] = base64.b64encode(b"broken").decode()
    api.store[SECRET] = secret
    assert main(CERTS_ARGS + ["--kubeconfig", kubeconfig, "--force"]) == 0
    assert main(CERTS_ARGS + ["--kubeconfig", kubeconfig, "--out-dir", str(mirror)]) == 0
    assert certs.read_dir(mirror).tls_cert == base64.b64decode(api.get(SECRET)["data"]["tls.crt"])
    # files of another CA are left alone without --force
    other = tmp_path / "other"
    assert main(["certs", "--out-dir", str(other)]) == 0
    before = certs.read_dir(other)
    capsys.readouterr()
    assert main(CERTS_ARGS + ["--kubeconfig", kubeconfig, "--out-dir", str(other)]) == 2
    assert "not an earlier copy of the Secret" in capsys.readouterr().err
    assert certs.read_dir(other) == before
