"""The reloading server TLS context: picks up new files, keeps serving through torn or missing
files during a rotation, and reports readiness."""

from __future__ import annotations

import os
import ssl
from pathlib import Path

import pytest

from webhook import certs
from webhook.certs import Bundle, Policy
from webhook.tls import CertificateError, ReloadingTLS

POLICY = Policy(dns_names=certs.service_dns_names("dra-webhook", "dra-system"))


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def new_serving(bundle: Bundle) -> Bundle:
    return certs.ensure_bundle(Bundle(bundle.ca_cert, bundle.ca_key, b"", b""), POLICY).bundle


def bump(path: Path) -> None:
    """Make a change visible even on file systems with coarse timestamps."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_reloads_only_when_files_change(tmp_path: Path) -> None:
    bundle = certs.ensure_bundle(Bundle(), POLICY).bundle
    certs.write_dir(tmp_path, bundle)
    tls = ReloadingTLS(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"))
    first = tls.context()
    assert isinstance(first, ssl.SSLContext) and first.minimum_version >= ssl.TLSVersion.TLSv1_2
    assert tls.context() is first and tls.reloads == 1
    certs.write_dir(tmp_path, new_serving(bundle))
    second = tls.context()
    assert second is not first and tls.reloads == 2
    assert tls.readiness() is None


def test_torn_or_missing_files_keep_the_previous_context(tmp_path: Path) -> None:
    bundle = certs.ensure_bundle(Bundle(), POLICY).bundle
    certs.write_dir(tmp_path, bundle)
    clock = Clock()
    tls = ReloadingTLS(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"), clock=clock)
    good = tls.context()
    renewed = new_serving(bundle)
    (tmp_path / "tls.crt").write_bytes(renewed.tls_cert)  # the key is still the old one: mismatch
    bump(tmp_path / "tls.crt")
    assert tls.context() is good
    (tmp_path / "tls.crt").write_bytes(renewed.tls_cert[:100])  # half written
    bump(tmp_path / "tls.crt")
    assert tls.context() is good
    (tmp_path / "tls.key").unlink()  # briefly missing
    assert tls.context() is good
    (tmp_path / "tls.crt").write_bytes(renewed.tls_cert)
    (tmp_path / "tls.key").write_bytes(renewed.tls_key)
    bump(tmp_path / "tls.key")
    clock.now += 1
    assert tls.context() is not good and tls.reloads == 2


def test_no_loadable_certificate_is_an_error_and_not_ready(tmp_path: Path) -> None:
    tls = ReloadingTLS(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"))
    with pytest.raises(CertificateError, match="cannot read certificate files"):
        tls.context()
    assert "cannot read" in (tls.readiness() or "")
    (tmp_path / "tls.crt").write_text("not a certificate")
    (tmp_path / "tls.key").write_text("not a key")
    with pytest.raises(CertificateError, match="cannot load certificate"):
        tls.context()
