"""TLS for the webhook: which certificate pair is current, and whether it loads.

:class:`ReloadingTLS` keeps a context built from the certificate and key files and rebuilds
it when they change (mtime, size or inode, so that Kubernetes' atomic symlink swap of Secret
volumes counts). A half-written or mismatched pair during a rotation fails to load; the
previous context is kept and the load retried. ``dra-webhook serve`` polls it from the main
process and respawns granian's workers (which load the files themselves) only once a changed
pair has loaded, so a torn rotation never reaches a worker; ``/readyz`` reports a pair that
never loaded.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading
import time
from typing import Callable

log = logging.getLogger("dra_webhook.tls")

#: Seconds to wait before retrying a certificate pair that failed to load.
RETRY_FAILED_AFTER = 0.5

Signature = tuple[tuple[int, int, int], ...]


class CertificateError(Exception):
    """The certificate and key files cannot be loaded."""


class ReloadingTLS:
    """Hands out a server :class:`ssl.SSLContext` for ``certfile``/``keyfile``, reloaded when they change."""

    def __init__(self, certfile: str, keyfile: str, *, ciphers: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.certfile = certfile
        self.keyfile = keyfile
        self._ciphers = ciphers
        self._clock = clock
        self._lock = threading.Lock()
        self._context: ssl.SSLContext | None = None
        self._signature: Signature | None = None
        self._failed: tuple[Signature, float] | None = None
        self.reloads = 0

    def context(self) -> ssl.SSLContext:
        """The current context; raises :class:`CertificateError` only if none could ever be loaded."""
        try:
            signature = self._stat()
        except OSError as exc:
            if self._context is not None:
                return self._context  # files briefly missing mid-rotation: keep serving
            raise CertificateError(f"cannot read certificate files: {exc}") from None
        if signature == self._signature and self._context is not None:
            return self._context
        with self._lock:
            if signature != self._signature or self._context is None:
                self._reload(signature)
        if self._context is None:
            raise CertificateError(f"cannot load certificate {self.certfile} with key {self.keyfile}")
        return self._context

    def readiness(self) -> str | None:
        """``None`` when a context can be served, else why not (for ``/readyz``)."""
        try:
            self.context()
        except CertificateError as exc:
            return str(exc)
        return None

    def _stat(self) -> Signature:
        """What identifies the current content of both files without reading them."""
        parts = []
        for path in (self.certfile, self.keyfile):
            st = os.stat(path)
            parts.append((st.st_mtime_ns, st.st_size, st.st_ino))
        return tuple(parts)

    def _reload(self, signature: Signature) -> None:
        """Build a context from the files (under the lock); keep the old one if that fails."""
        now = self._clock()
        if self._failed and self._failed[0] == signature and now - self._failed[1] < RETRY_FAILED_AFTER:
            return
        try:
            context = build_context(self.certfile, self.keyfile, self._ciphers)
        except (OSError, ssl.SSLError, ValueError) as exc:
            self._failed = (signature, now)
            log.warning("certificate %s / key %s not loadable (yet): %s; keeping the previous one",
                        self.certfile, self.keyfile, exc)
            return
        if self._context is not None:
            log.info("reloaded certificate %s", self.certfile)
        self._context = context
        self._signature = signature
        self._failed = None
        self.reloads += 1


def build_context(certfile: str, keyfile: str, ciphers: str | None = None) -> ssl.SSLContext:
    """A TLS 1.2+ server context with the certificate chain loaded."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.options |= ssl.OP_NO_COMPRESSION
    if ciphers:
        context.set_ciphers(ciphers)
    context.load_cert_chain(certfile=certfile, keyfile=keyfile)
    return context
