"""URLs parsed as Go's ``net/url`` does, for the Kubernetes CEL ``url`` library.

``url()``/``isURL()`` accept what ``url.ParseRequestURI`` accepts and then keep what
``url.Parse`` gives; the accessors return Go's ``Scheme``, ``Host``, ``Hostname()``,
``Port()``, ``EscapedPath()`` and ``Query()``. Error texts are Go's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from kubectl_dra.cel.netaddr import go_quote


class URLError(ValueError):
    """A URL that Go's net/url rejects; the message is Go's text."""


_UNRESERVED = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~")
_PATH_KEEP = frozenset("$&+,/:;=@")
_HEXDIGITS = frozenset("0123456789abcdefABCDEF")


@dataclass(frozen=True)
class URL:
    """The parts of a parsed URL that the CEL accessors expose."""

    scheme: str
    opaque: str
    userinfo: str | None
    host: str
    path: str
    raw_query: str
    fragment: str
    force_query: bool = False

    def hostname(self) -> str:
        """Go's ``Hostname()``: host without port and IPv6 brackets."""
        host, _ = _split_host_port(self.host)
        return host

    def port(self) -> str:
        """Go's ``Port()``: the port digits, or empty."""
        _, port = _split_host_port(self.host)
        return port

    def escaped_path(self) -> str:
        """Go's ``EscapedPath()`` (no RawPath kept: the path escaped)."""
        return _escape(self.path, "path")

    def query(self) -> dict[str, list[str]]:
        """Go's ``Query()``: the query parsed, bad pairs dropped."""
        return _parse_query(self.raw_query)

    def __str__(self) -> str:
        out = []
        if self.scheme:
            out.append(self.scheme + ":")
        if self.opaque:
            out.append(self.opaque)
        else:
            if self.scheme or self.host or self.userinfo is not None:
                if self.host or self.path or self.userinfo is not None:
                    out.append("//")
                if self.userinfo is not None:
                    out.append(self.userinfo + "@")
                out.append(self.host)
            path = self.escaped_path()
            if path and path[0] != "/" and self.host:
                out.append("/")
            out.append(path)
        if self.force_query or self.raw_query:
            out.append("?" + self.raw_query)
        if self.fragment:
            out.append("#" + _escape(self.fragment, "fragment"))
        return "".join(out)


def _split_host_port(host: str) -> tuple[str, str]:
    """Split ``host[:port]`` the way Go's Hostname()/Port() do."""
    colon = host.rfind(":")
    port = ""
    if colon >= 0 and host[colon + 1:].isdigit() and host[colon + 1:].isascii():
        host, port = host[:colon], host[colon + 1:]
    elif colon >= 0 and host[colon + 1:] == "":
        host = host[:colon]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif host.startswith("[") and "]" in host:
        host = host[1:host.index("]")]
    return host, port


def _should_escape(ch: str, mode: str) -> bool:
    """Go's shouldEscape for the path and fragment modes."""
    if ch in _UNRESERVED:
        return False
    if mode == "path":
        return ch not in _PATH_KEEP
    if mode == "fragment":
        return ch not in _PATH_KEEP and ch not in "!()*?'"
    return True


def _escape(text: str, mode: str) -> str:
    """Percent-encode bytes that Go escapes in ``mode``."""
    out = []
    for ch in text:
        if ord(ch) < 0x80 and not _should_escape(ch, mode):
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8"))
    return "".join(out)


def _unescape(text: str, mode: str) -> str:
    """Go's unescape: ``%XX`` decoded (``+`` is a space in query mode); errors as Go's."""
    i = 0
    raw = bytearray()
    while i < len(text):
        ch = text[i]
        if ch == "%":
            chunk = text[i:i + 3]
            if len(chunk) < 3 or chunk[1] not in _HEXDIGITS or chunk[2] not in _HEXDIGITS:
                bad = chunk if len(chunk) == 3 else chunk
                raise URLError(f"invalid URL escape {go_quote(bad)}")
            raw.append(int(chunk[1:], 16))
            i += 3
            continue
        if ch == "+" and mode == "query":
            raw.append(0x20)
        else:
            raw.extend(ch.encode("utf-8"))
        i += 1
    return raw.decode("utf-8", errors="surrogateescape")


def _parse_query(raw: str) -> dict[str, list[str]]:
    """Go's url.ParseQuery, keeping the pairs that parse."""
    out: dict[str, list[str]] = {}
    for pair in raw.split("&"):
        if pair == "" or ";" in pair:
            continue
        key, _, value = pair.partition("=")
        try:
            key, value = _unescape(key, "query"), _unescape(value, "query")
        except URLError:
            continue
        out.setdefault(key, []).append(value)
    return out


def _get_scheme(raw: str) -> tuple[str, str]:
    """Go's getScheme: (scheme, rest)."""
    for i, ch in enumerate(raw):
        if ch.isascii() and ch.isalpha():
            continue
        if ch.isascii() and (ch.isdigit() or ch in "+-."):
            if i == 0:
                return "", raw
            continue
        if ch == ":":
            if i == 0:
                raise URLError("missing protocol scheme")
            return raw[:i], raw[i + 1:]
        return "", raw
    return "", raw


def _valid_port(port: str) -> bool:
    return port == "" or (port.isascii() and port.isdigit())


def _parse_host(host: str) -> str:
    """Go's parseHost: brackets, port check, zone and escape rules."""
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            raise URLError("missing ']' in host")
        port = host[end + 1:]
        if port and (not port.startswith(":") or not _valid_port(port[1:])):
            raise URLError(f"invalid port {go_quote(port)} after host")
        _unescape(host[:end + 1], "host")
        return host
    colon = host.rfind(":")
    if colon >= 0 and not _valid_port(host[colon + 1:]):
        raise URLError(f"invalid port {go_quote(host[colon:])} after host")
    for ch in host:
        if ch == "%":
            continue
        if ord(ch) < 0x80 and not (ch.isalnum() or ch in "-._~!$&'()*+,;=:[]<>\""):
            if ch in " {}|\\^`":
                raise URLError(f"invalid character {go_quote(ch)} in host name")
    return _unescape(host, "host")


def _parse_authority(authority: str) -> tuple[str | None, str]:
    """Go's parseAuthority: (userinfo or None, host)."""
    at = authority.rfind("@")
    if at < 0:
        return None, _parse_host(authority)
    userinfo = authority[:at]
    for ch in userinfo:
        if not (ch.isascii() and (ch.isalnum() or ch in "-._:~!$&'()*+,;=%@")):
            raise URLError("net/url: invalid userinfo")
    return userinfo, _parse_host(authority[at + 1:])


def _parse(raw: str, via_request: bool) -> URL:
    """Go's url.parse."""
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in raw):
        raise URLError("net/url: invalid control character in URL")
    if raw == "" and via_request:
        raise URLError("empty url")
    if raw == "*":
        return URL("", "", None, "", "*", "", "")
    scheme, rest = _get_scheme(raw)
    scheme = scheme.lower()
    force_query = False
    if rest.endswith("?") and rest.count("?") == 1:
        force_query, rest, raw_query = True, rest[:-1], ""
    else:
        rest, _, raw_query = rest.partition("?")
    if not rest.startswith("/"):
        if scheme:
            return URL(scheme, rest, None, "", "", raw_query, "", force_query)
        if via_request:
            raise URLError("invalid URI for request")
        if ":" in rest.split("/", 1)[0]:
            raise URLError("first path segment in URL cannot contain colon")
    userinfo, host = None, ""
    if (scheme or (not via_request and not rest.startswith("///"))) and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        userinfo, host = _parse_authority(authority)
    path = _unescape(rest, "path")
    return URL(scheme, "", userinfo, host, path, raw_query, "", force_query)


def _wrap(raw: str, err: URLError) -> URLError:
    """Go's url.Error text: ``parse "<url>": <reason>``."""
    return URLError(f"parse {go_quote(raw)}: {err}")


@lru_cache(maxsize=4096)
def parse_request_uri(raw: str) -> URL:
    """``url.ParseRequestURI``."""
    try:
        return _parse(raw, True)
    except URLError as err:
        raise _wrap(raw, err) from None


@lru_cache(maxsize=4096)
def parse_url(raw: str) -> URL:
    """``url.Parse`` (the fragment split off first)."""
    base, _, fragment = raw.partition("#")
    try:
        parsed = _parse(base, False)
        fragment = _unescape(fragment, "fragment")
    except URLError as err:
        raise _wrap(raw, err) from None
    return URL(parsed.scheme, parsed.opaque, parsed.userinfo, parsed.host, parsed.path,
               parsed.raw_query, fragment, parsed.force_query)
