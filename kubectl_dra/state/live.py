"""Live-cluster source: one snapshot of the DRA objects read through the ``kubernetes`` client.

The objects are read as raw JSON (no generated models: they would drop fields that the
installed client does not know, such as those of alpha gates), with paginated lists
(``limit``/``continue``), so every object is exactly what the API server stores. Every
access problem becomes a :class:`~kubectl_dra.errors.ClusterAccessError` (exit 2) that
says what could not be read and what to check.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..errors import ClusterAccessError
from ..limits import MAX_RESPONSE_BYTES
from .snapshot import ClusterState, Obj

if TYPE_CHECKING:
    from kubernetes.client import Configuration

#: page size of list requests (kubectl uses 500 too)
PAGE_SIZE = 500
#: tries of a request the server answers with 429/503 and Retry-After, and the longest wait
RETRY_AFTER_ATTEMPTS = 4
MAX_RETRY_AFTER = 5.0
#: bytes read from a response body at a time
_READ_CHUNK = 256 * 1024

RESOURCE_GROUP_VERSION = "resource.k8s.io/v1"
SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


@dataclass(frozen=True)
class Resource:
    """One list endpoint: the kind it returns, its base path and plural, and whether we need it."""

    kind: str
    base: str  # "/api/v1" or "/apis/<group>/<version>"
    plural: str
    #: required kinds fail the command on 403/404; optional ones only warn
    required: bool

    @property
    def path(self) -> str:
        return f"{self.base}/{self.plural}"

    @property
    def api_version(self) -> str:
        return self.base[len("/apis/"):] if self.base.startswith("/apis/") else self.base[len("/api/"):]


RESOURCES: tuple[Resource, ...] = (
    Resource("Node", "/api/v1", "nodes", True),
    Resource("DeviceClass", f"/apis/{RESOURCE_GROUP_VERSION}", "deviceclasses", True),
    Resource("ResourceSlice", f"/apis/{RESOURCE_GROUP_VERSION}", "resourceslices", True),
    Resource("ResourceClaim", f"/apis/{RESOURCE_GROUP_VERSION}", "resourceclaims", True),
    Resource("ResourceClaimTemplate", f"/apis/{RESOURCE_GROUP_VERSION}", "resourceclaimtemplates", False),
    Resource("Pod", "/api/v1", "pods", False),
    Resource("Namespace", "/api/v1", "namespaces", False),
)

#: the API group that serves PodGroups (its version is discovered)
POD_GROUP_GROUP = "scheduling.k8s.io"


# --------------------------------------------------------------------------- kubeconfig


def _kubeconfig_paths(kubeconfig: str | None) -> str | None:
    """The kubeconfig to read (--kubeconfig, else $KUBECONFIG, else ~/.kube/config), or None."""
    if kubeconfig:
        return kubeconfig
    env = os.environ.get("KUBECONFIG")
    if env:
        return env
    default = Path("~/.kube/config").expanduser()
    return str(default) if default.exists() else None


def _in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and SERVICE_ACCOUNT_DIR.joinpath("token").exists()


def _check_files_exist(paths: str) -> None:
    """A readable message for a --kubeconfig/$KUBECONFIG naming files that are not there."""
    parts = [p for p in paths.split(os.pathsep) if p]
    if not any(Path(p).expanduser().exists() for p in parts):
        raise ClusterAccessError(f"kubeconfig {paths}: no such file (use --kubeconfig, or --state for files)")


def _configuration(kubeconfig: str | None, context: str | None) -> Any:
    """A fresh client Configuration (never the process-wide default) for the chosen context."""
    from kubernetes import client, config

    cfg = client.Configuration()
    path = _kubeconfig_paths(kubeconfig)
    try:
        if path is not None:
            _check_files_exist(path)
            config.load_kube_config(config_file=path, context=context, client_configuration=cfg,
                                    persist_config=False)
        elif _in_cluster():
            if context:
                raise ClusterAccessError(f"--context {context}: no kubeconfig to take it from (running in-cluster)")
            config.load_incluster_config(client_configuration=cfg)
        else:
            raise ClusterAccessError(
                "no cluster to read: no kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config) and not "
                "running inside a cluster; use --state FILE to work from files")
    except config.ConfigException as exc:
        raise ClusterAccessError(f"cannot use kubeconfig{' context ' + repr(context) if context else ''}: {exc}") from None
    except OSError as exc:
        raise ClusterAccessError(f"cannot read kubeconfig {path}: {exc}") from None
    except UnicodeDecodeError as exc:  # a binary file where the kubeconfig should be
        raise ClusterAccessError(f"kubeconfig {path}: not a kubeconfig (not UTF-8 text: invalid byte at "
                                 f"offset {exc.start})") from None
    except ValueError as exc:  # the client's URL parsing: `server: http://[::1`
        detail = " ".join(str(exc).split())
        where = "clusters[].cluster.server: " if "URL" in detail or "port" in detail else ""
        raise ClusterAccessError(f"kubeconfig {path}{' context ' + repr(context) if context else ''}: "
                                 f"{where}{detail}") from None
    cfg.retries = _retries()
    return cfg


def _retries() -> Any:
    """Retry refused connections twice; never retry reads, so a timeout takes one timeout."""
    import urllib3

    return urllib3.Retry(total=2, connect=2, read=0, status=0, redirect=2, other=0,
                         respect_retry_after_header=False)  # Retry-After: see _Client.get


def within_deadline(work: Callable[[], Any], seconds: float, expired: Callable[[], ClusterAccessError]) -> Any:
    """``work()``, or ``expired()`` raised once ``seconds`` have passed (0: no deadline).

    The socket timeout bounds each read, not a request: a server that drips a byte at a time,
    or an exec credential plugin that never answers, would hold a command forever. The work
    runs on a daemon thread that the command leaves behind when the deadline passes (it ends
    with the process); Ctrl-C still interrupts the wait."""
    if not seconds:
        return work()
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread as is
            outcome["error"] = exc

    worker = threading.Thread(target=run, name="kubectl-dra-request", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise expired()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _read_body(response: Any, what: str, host: str, deadline: float | None) -> bytes:
    """A response body read in chunks, refused past :data:`MAX_RESPONSE_BYTES` (an endless body
    must not take all memory) and abandoned after ``deadline`` (time.monotonic())."""
    chunks: list[bytes] = []
    total = 0
    read = getattr(response, "read1", None) or response.read
    while True:
        chunk = read(_READ_CHUNK)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > MAX_RESPONSE_BYTES:
            response.close()
            raise ClusterAccessError(f"the answer of {host} to {what} is larger than "
                                     f"{MAX_RESPONSE_BYTES // (1024 * 1024)} MiB, the most kubectl-dra reads "
                                     "from one response")
        if deadline is not None and time.monotonic() > deadline:
            response.close()
            raise TimeoutError()
        chunks.append(chunk)


def kubeconfig_namespace(kubeconfig: str | None = None, context: str | None = None) -> str | None:
    """The namespace of the kubeconfig context (or of the pod, in-cluster); None when unset."""
    path = _kubeconfig_paths(kubeconfig)
    if path is None:
        ns_file = SERVICE_ACCOUNT_DIR / "namespace"
        if _in_cluster() and ns_file.exists():
            return ns_file.read_text(encoding="utf-8").strip() or None
        return None
    from kubernetes import config

    try:
        contexts, active = config.list_kube_config_contexts(config_file=path)
    except (config.ConfigException, OSError):
        return None
    chosen = active
    if context:
        chosen = next((c for c in contexts or [] if c.get("name") == context), None)
    if not chosen:
        return None
    return (chosen.get("context") or {}).get("namespace") or None


# --------------------------------------------------------------------------- requests


class _Client:
    """Raw JSON GETs through ``kubernetes.client.ApiClient``, with errors turned into ours."""

    def __init__(self, cfg: "Configuration", timeout: float) -> None:
        from kubernetes import client

        self.api = client.ApiClient(cfg)
        self.host = cfg.host
        self.timeout = timeout

    def close(self) -> None:
        self.api.close()

    def get(self, path: str, query: list[tuple[str, Any]] | None = None, what: str = "") -> tuple[int, Any]:
        """(HTTP status, decoded JSON body), waiting and retrying a few times when the server asks
        for it (429/503 with Retry-After, as API priority and fairness does); raises
        ClusterAccessError for transport failures."""
        for attempt in range(RETRY_AFTER_ATTEMPTS):
            status, data, retry_after = self._get_once(path, query, what)
            if retry_after is None or attempt == RETRY_AFTER_ATTEMPTS - 1:
                break
            time.sleep(min(retry_after, MAX_RETRY_AFTER, self.timeout or MAX_RETRY_AFTER))
        return status, data

    def _get_once(self, path: str, query: list[tuple[str, Any]] | None, what: str) -> tuple[int, Any, float | None]:
        import urllib3
        from kubernetes.client.exceptions import ApiException

        what = what or path
        try:
            status, data, headers = within_deadline(lambda: self._request(path, query or [], what),
                                                    self.timeout, lambda: self._timed_out(what))
        except ApiException as exc:  # raised for TLS errors and by older clients for non-2xx
            if exc.status:
                return exc.status, _decode(exc.body), _retry_after(exc.status, exc.headers or {})
            raise ClusterAccessError(f"cannot talk to {self.host} ({what}): {_first_line(exc.reason)}") from None
        except urllib3.exceptions.MaxRetryError as exc:
            raise self._transport_error(exc.reason or exc, what) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._transport_error(exc, what) from None
        return status, data, _retry_after(status, headers)

    def _request(self, path: str, query: list[tuple[str, Any]], what: str) -> tuple[int, Any, Any]:
        """One GET with its body read within the size bound and the request's deadline."""
        headers = {"Accept": "application/json"}
        deadline = time.monotonic() + self.timeout if self.timeout else None
        timeout = self.timeout or None
        if hasattr(self.api, "param_serialize"):  # kubernetes >= 35 (openapi-generator 7)
            method, url, hdrs, body, post = self.api.param_serialize(
                "GET", path, query_params=query, header_params=headers, auth_settings=["BearerToken"])
            resp = self.api.call_api(method, url, hdrs, body, post, _request_timeout=timeout)
            raw = getattr(resp, "response", resp)
            return resp.status, _decode(_read_body(raw, what, self.host, deadline)), resp.headers
        resp = self.api.call_api(  # type: ignore[call-arg]  # pragma: no cover - kubernetes < 35 took these keywords
            path, "GET", query_params=query, header_params=headers, auth_settings=["BearerToken"],
            _preload_content=False, _return_http_data_only=False, _request_timeout=timeout)
        raw = resp[0] if isinstance(resp, tuple) else resp
        return raw.status, _decode(_read_body(raw, what, self.host, deadline)), raw.headers

    def _timed_out(self, what: str) -> ClusterAccessError:
        return ClusterAccessError(
            f"timed out after {self.timeout:g}s waiting for {self.host} ({what}); "
            "check the network or raise --request-timeout")

    def _transport_error(self, exc: BaseException, what: str) -> ClusterAccessError:
        import urllib3

        if isinstance(exc, urllib3.exceptions.NewConnectionError):  # a subclass of the timeout errors
            return ClusterAccessError(f"cannot connect to {self.host} ({what}): {_first_line(str(exc))}")
        if isinstance(exc, (urllib3.exceptions.TimeoutError, TimeoutError)):
            return self._timed_out(what)
        if isinstance(exc, urllib3.exceptions.SSLError):
            return ClusterAccessError(f"TLS error talking to {self.host} ({what}): {_first_line(str(exc))}")
        return ClusterAccessError(f"cannot connect to {self.host} ({what}): {_first_line(str(exc))}")


def _retry_after(status: int, headers: Any) -> float | None:
    """Seconds the server asks us to wait before retrying (429/503 with Retry-After), else None."""
    if status not in (429, 503):
        return None
    try:
        value = headers.get("Retry-After") if headers is not None else None
    except AttributeError:
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _decode(raw: Any) -> Any:
    if raw is None:
        return None
    if isinstance(raw, (bytes, bytearray)):
        raw = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(raw) if raw else None
    except ValueError:  # not JSON, or an integer past Python's digit limit: the caller says what it expected
        return raw
    except RecursionError:  # nested past the interpreter's stack: the bounded decoder keeps its own
        from .bounded import DecodeError, load_json

        try:
            return load_json(raw)
        except (DecodeError, ValueError):
            return raw


def _first_line(text: Any) -> str:
    return str(text).strip().splitlines()[0] if str(text).strip() else "unknown error"


def _status_message(body: Any) -> str:
    """The ``message`` of a Kubernetes Status body, or the text itself."""
    if isinstance(body, dict):
        return str(body.get("message") or body.get("reason") or "").strip()
    return _first_line(body) if body else ""


def http_error(status: int, body: Any, resource: Resource | None, path: str, host: str) -> ClusterAccessError:
    """One people-facing error for a non-2xx answer to a GET."""
    detail = _status_message(body)
    suffix = f": {detail}" if detail else ""
    target = f"{resource.plural} ({resource.api_version})" if resource else path
    if status == 401:
        return ClusterAccessError(
            f"unauthorized (401) listing {target} on {host}: the credentials of the kubeconfig user were "
            f"rejected; log in again or check the token{suffix}")
    if status == 403:
        return ClusterAccessError(
            f"forbidden (403): not allowed to list {target}{suffix}; ask for RBAC 'list' on {target}")
    if status == 404:
        if resource and resource.base.endswith(RESOURCE_GROUP_VERSION):
            return _no_dra_api(host)
        return ClusterAccessError(f"not found (404): the server at {host} does not serve {target}{suffix}")
    if status == 410:
        return ClusterAccessError(f"the list of {target} changed too fast to page through (410 Gone){suffix}")
    return ClusterAccessError(f"the API server at {host} failed ({status}) listing {target}{suffix}")


def _no_dra_api(host: str) -> ClusterAccessError:
    return ClusterAccessError(
        f"the cluster at {host} does not serve {RESOURCE_GROUP_VERSION} (Dynamic Resource Allocation is GA "
        "from Kubernetes 1.34); upgrade the cluster or enable the API, or use --state with files")


# --------------------------------------------------------------------------- listing


class _Progress:
    """A single self-overwriting line on stderr, only when stderr is a terminal and lists are long."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()
        self.shown = False

    def update(self, plural: str, count: int, more: bool) -> None:
        if not self.enabled:
            return
        with self.lock:
            self.counts[plural] = count
            if not more and not self.shown:
                return  # a single page: nothing worth a progress line
            self.shown = True
            text = ", ".join(f"{n} {p}" for p, n in self.counts.items())
            sys.stderr.write(f"\rreading cluster: {text}…\x1b[K")
            sys.stderr.flush()

    def done(self) -> None:
        if self.enabled and self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def list_all(client: _Client, resource: Resource, progress: _Progress | None = None,
             page_size: int = PAGE_SIZE) -> list[Obj]:
    """Every object of ``resource``, page by page; the continue token keeps the pages one snapshot.

    A 410 (the snapshot behind the continue token expired) restarts the list once without
    paging, as kubectl does, so the result is still one consistent list.
    """
    items: list[Obj] = []
    token: str | None = None
    restarted = False
    while True:
        query: list[tuple[str, Any]] = [("limit", page_size)] if page_size else []
        if token:
            query.append(("continue", token))
        status, body = client.get(resource.path, query, what=f"list {resource.plural}")
        if status == 410 and token and not restarted:
            items, token, restarted, page_size = [], None, True, 0
            continue
        if not 200 <= status <= 299:
            raise http_error(status, body, resource, resource.path, client.host)
        if not isinstance(body, dict):
            raise ClusterAccessError(f"unexpected answer listing {resource.plural}: not a JSON object")
        for item in body.get("items") or []:
            if isinstance(item, dict):
                items.append({"apiVersion": resource.api_version, "kind": resource.kind, **item}
                             if "kind" not in item else item)
        token = ((body.get("metadata") or {}).get("continue")) or None
        if progress is not None:
            progress.update(resource.plural, len(items), bool(token))
        if not token:
            return items


def _discover_pod_groups(client: _Client) -> Resource | None:
    """The PodGroup list endpoint if the cluster serves one (preferred version first)."""
    status, body = client.get(f"/apis/{POD_GROUP_GROUP}", what="discovery")
    if status != 200 or not isinstance(body, dict):
        return None
    versions = [v.get("version") for v in body.get("versions") or [] if isinstance(v, dict)]
    preferred = (body.get("preferredVersion") or {}).get("version")
    ordered = ([preferred] if preferred else []) + [v for v in versions if v and v != preferred]
    for version in ordered:
        s, res = client.get(f"/apis/{POD_GROUP_GROUP}/{version}", what="discovery")
        if s == 200 and isinstance(res, dict):
            for r in res.get("resources") or []:
                if isinstance(r, dict) and r.get("name") == "podgroups":
                    return Resource("PodGroup", f"/apis/{POD_GROUP_GROUP}/{version}", "podgroups", False)
    return None


def _check_dra_api(client: _Client) -> None:
    """Fail early, with a clear message, when the cluster has no resource.k8s.io/v1."""
    status, body = client.get(f"/apis/{RESOURCE_GROUP_VERSION}", what="discovery")
    if status == 404:
        raise _no_dra_api(client.host)
    if not 200 <= status <= 299:
        raise http_error(status, body, None, f"/apis/{RESOURCE_GROUP_VERSION}", client.host)


def _read_optional(client: _Client, resource: Resource, progress: _Progress,
                   warnings: list[str]) -> list[Obj]:
    """A list the commands can do without: 403/404 become a warning, other failures still fail."""
    try:
        return list_all(client, resource, progress)
    except ClusterAccessError as exc:
        if any(code in exc.message for code in ("(403)", "(404)")):
            warnings.append(f"skipped {resource.plural}: {exc.message}")
            return []
        raise


def load_live_state(kubeconfig: str | None = None, context: str | None = None, timeout: float = 30.0,
                    *, progress: bool | None = None, workers: int = 4) -> ClusterState:
    """One snapshot of the cluster's DRA objects (nodes, classes, slices, claims, templates,
    pods, namespaces, pod groups), read once per command so every node sees the same state.

    ``progress`` (default: stderr is a terminal) shows a line on stderr while long lists load.
    """
    cfg = within_deadline(lambda: _configuration(kubeconfig, context), timeout, lambda: ClusterAccessError(
        f"timed out after {timeout:g}s reading the kubeconfig{' context ' + repr(context) if context else ''} "
        "(a credential plugin that does not answer?); check it, or raise --request-timeout"))
    # urllib3 logs each retry as a warning; our error message says it once, for people
    logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)
    client = _Client(cfg, timeout)
    bar = _Progress(sys.stderr.isatty() if progress is None else progress)
    warnings: list[str] = []
    try:
        _check_dra_api(client)
        resources = list(RESOURCES)
        pod_groups = _discover_pod_groups(client)
        if pod_groups is not None:
            resources.append(pod_groups)
        readers: list[Callable[[], list[Obj]]] = [
            functools.partial(list_all, client, r, bar) if r.required
            else functools.partial(_read_optional, client, r, bar, warnings)
            for r in resources
        ]
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            futures = [pool.submit(reader) for reader in readers]
            lists = [f.result() for f in futures]
    finally:
        bar.done()
        client.close()
    state = ClusterState()
    for objs in lists:
        state.extend(objs)
    state.warnings.extend(warnings)
    return state
