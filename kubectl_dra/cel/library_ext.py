"""The rest of the apiserver's CEL base environment: IP, CIDR, URL, format, list indexOf.

Semantics follow k8s.io/apiserver/pkg/cel/library (``ip.go``, ``cidr.go``,
``urls.go``, ``format.go``, ``lists.go``). Two sets of declarations exist:

* :func:`check_decls` / :func:`check_extension` for the type-checking environment:
  declarations only, with upstream's overload ids (the cost estimator reads them).
  Functions that cel-cpp already owns (``string``, the ordering operators,
  ``indexOf``/``lastIndexOf``) are re-declared there with the extra overloads.
* :func:`runtime_decls` for the evaluation environment: Python implementations.
  Calls that cannot be dispatched by the engine (several message types share one
  runtime kind; optional results) are renamed by the rewriter to the ``__dra_*``
  helpers declared here.
"""

from __future__ import annotations

from typing import Any, Callable

from cel_expr_python import cel

from kubectl_dra.cel import _types, limits
from kubectl_dra.cel.formats import FORMATS, VALIDATORS
from kubectl_dra.cel.formatting import format_string
from kubectl_dra.cel.library import LibraryError
from kubectl_dra.cel.netaddr import AddrError, Prefix, go_quote, parse_addr, parse_prefix
from kubectl_dra.cel.urls import URLError, parse_request_uri, parse_url

T = cel.Type
IPT = T(_types.IP_TYPE)
CIDRT = T(_types.CIDR_TYPE)
URLT = T(_types.URL_TYPE)
FMTT = T(_types.FORMAT_TYPE)
QT = T(_types.QUANTITY_TYPE)
ST = T(_types.SEMVER_TYPE)
#: the type parameter of upstream's ``list(A).indexOf(A)`` (cel-cpp spells parameters ``~A``)
TYPE_PARAM_A = T("~A")
LIST_OF_A = T.List(TYPE_PARAM_A)

#: runtime helpers the rewriter targets
STRING_FUNCTION = "__dra_string"
INDEX_OF_FUNCTION = "__dra_index_of"
LAST_INDEX_OF_FUNCTION = "__dra_last_index_of"
FORMAT_KNOWN_FUNCTION = "__dra_format_known"
FORMAT_OF_FUNCTION = "__dra_format_of"
FORMAT_VALIDATE_FUNCTION = "__dra_format_validate"
STRING_FORMAT_FUNCTION = "__dra_string_format"
MAP_INSERT_FUNCTION = "cel.@mapInsert"
REPLACE_FUNCTION = "__dra_replace"
ADD_STRING_FUNCTION = "__dra_add_string"
#: overload ids of string-growing calls the rewriter routes through the size-checked helpers
REPLACE_OVERLOADS = frozenset({"string_replace_string_string", "string_replace_string_string_int"})
ADD_STRING_OVERLOADS = frozenset({"add_string"})
LIST_GROWTH_FUNCTION = "__dra_list_growth_ok"
ADD_LIST_OVERLOADS = frozenset({"add_list"})
#: overload ids whose calls the rewriter renames to a runtime helper
OWN_STRING_OVERLOADS = frozenset({"ip_to_string", "cidr_to_string"})
OWN_LIST_INDEX_PREFIX = "list_"


# --- IP ------------------------------------------------------------------------------


def parse_ip(text: str) -> Any:
    """apiserver parseIPAddr: netip.ParseAddr without zones or IPv4-mapped IPv6."""
    try:
        addr = parse_addr(text)
    except AddrError as err:
        raise LibraryError(
            f"IP Address {go_quote(text)} parse error during conversion from string: {err}") from None
    if addr.zone:
        raise LibraryError(f"IP address {go_quote(text)} with zone value is not allowed")
    if addr.is_4in6():
        raise LibraryError(f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed")
    return addr


def _ip(text: str) -> Any:
    return _types.IPMsg(t=str(parse_ip(text)))


def _is_ip(text: str) -> bool:
    try:
        parse_ip(text)
    except LibraryError:
        return False
    return True


def _ip_is_canonical(text: str) -> bool:
    return str(parse_ip(text)) == text


def _addr(msg: Any) -> Any:
    return parse_addr(msg.t)


def _family(msg: Any) -> int:
    return _addr(msg).family


# --- CIDR ----------------------------------------------------------------------------

_CIDR_PREFIX = "network address parse error during conversion from string: "


def parse_cidr(text: str) -> Prefix:
    """apiserver stringToCIDR (its message prefix appears twice, as upstream's)."""
    try:
        prefix = parse_prefix(text)
    except AddrError as err:
        raise LibraryError(_CIDR_PREFIX + _CIDR_PREFIX + str(err)) from None
    if prefix.addr.is_4in6():
        raise LibraryError(_CIDR_PREFIX + f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed")
    return prefix


def _cidr(text: str) -> Any:
    return _types.CIDRMsg(t=str(parse_cidr(text)))


def _is_cidr(text: str) -> bool:
    try:
        parse_cidr(text)
    except LibraryError:
        return False
    return True


def _prefix(msg: Any) -> Prefix:
    return parse_prefix(msg.t)


def _contains_ip(cidr: Any, other: Any) -> bool:
    if isinstance(other, str):
        try:
            addr = parse_ip(other)
        except LibraryError:
            raise LibraryError("no such overload") from None
    else:
        addr = _addr(other)
    return _prefix(cidr).contains(addr)


def _contains_cidr(cidr: Any, other: Any) -> bool:
    inner = parse_cidr(other) if isinstance(other, str) else _prefix(other)
    outer = _prefix(cidr)
    return outer.overlaps(inner) and outer.length <= inner.length


def _cidr_ip(cidr: Any) -> Any:
    return _types.IPMsg(t=str(_prefix(cidr).addr))


def _masked(cidr: Any) -> Any:
    return _types.CIDRMsg(t=str(_prefix(cidr).masked()))


# --- URL -----------------------------------------------------------------------------


def _url(text: str) -> Any:
    try:
        parse_request_uri(text)
        parsed = parse_url(text)
    except URLError as err:
        raise LibraryError(f"URL parse error during conversion from string: {err}") from None
    return _types.URLMsg(t=str(parsed))


def _is_url(text: str) -> bool:
    try:
        parse_request_uri(text)
    except URLError:
        return False
    return True


def _parsed(msg: Any) -> Any:
    return parse_url(msg.t)


# --- format --------------------------------------------------------------------------


def _format_known(name: str) -> bool:
    return name in FORMATS


def _format_of(name: str) -> Any:
    return _types.FormatMsg(n=FORMATS[name][0])


def _format_validate(fmt: Any, text: str) -> list[str]:
    return list(VALIDATORS[fmt.n](text))


# --- conversions and lists -------------------------------------------------------------


def _to_string(msg: Any) -> str:
    """string(IP) / string(CIDR): the canonical text both messages hold."""
    return msg.t


def _cel_equal(a: Any, b: Any) -> bool:
    """CEL heterogeneous equality over plain values (bool is not a number)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        if hasattr(a, "DESCRIPTOR") and hasattr(b, "DESCRIPTOR"):
            return a.DESCRIPTOR.full_name == b.DESCRIPTOR.full_name and a == b
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_cel_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_cel_equal(a[k], b[k]) for k in a)
    return a == b


def _string_index_of(text: str, sub: str, offset: int = 0) -> int:
    """strings ext indexOf as cel-go v0.27 (code points; an offset past the end gives -1)."""
    if sub == "":
        return offset
    if offset < 0:
        raise LibraryError(f"index out of range: {offset}")
    return -1 if offset >= len(text) else text.find(sub, offset)


def _string_last_index_of(text: str, sub: str, offset: int | None = None) -> int:
    """strings ext lastIndexOf."""
    if offset is None:
        return len(text) if sub == "" else text.rfind(sub)
    if sub == "":
        return offset
    if offset < 0:
        raise LibraryError(f"index out of range: {offset}")
    if offset >= len(text):
        return -1
    return text.rfind(sub, 0, min(offset, len(text) - len(sub)) + len(sub))


def _index_of(target: Any, item: Any, offset: Any = None) -> int:
    """indexOf on a list (apiserver lists library) or a string (strings extension)."""
    if isinstance(target, str):
        return _string_index_of(target, item, 0 if offset is None else offset)
    for i, value in enumerate(target):
        if _cel_equal(value, item):
            return i
    return -1


def _last_index_of(target: Any, item: Any, offset: Any = None) -> int:
    """lastIndexOf on a list or a string."""
    if isinstance(target, str):
        return _string_last_index_of(target, item, offset)
    for i in range(len(target) - 1, -1, -1):
        if _cel_equal(target[i], item):
            return i
    return -1


def _map_insert(target: dict[Any, Any], key: Any, value: Any = None) -> dict[Any, Any]:
    """cel.@mapInsert of the two-variable comprehensions (transformMap / transformMapEntry)."""
    out = dict(target)
    entries = key.items() if isinstance(key, dict) and value is None else ((key, value),)
    for k, v in entries:
        if k in out:
            raise LibraryError(f"insert failed: key {k} already exists")
        out[k] = v
    return out


# --- declarations ----------------------------------------------------------------------


def _ov(oid: str, ret: Any, params: list[Any], member: bool = False,
        impl: Callable[..., Any] | None = None) -> Any:
    if impl is None:
        return cel.Overload(oid, ret, params, is_member=member)
    return cel.Overload(oid, ret, params, is_member=member, impl=impl)


def _shared_decls(impls: bool) -> list[Any]:
    """Functions that only these libraries declare (same in both environments)."""
    def f(fn: Callable[..., Any]) -> Callable[..., Any] | None:
        return fn if impls else None

    def ip_pred(name: str, oid: str, method: str) -> Any:
        return cel.FunctionDecl(name, [_ov(oid, T.BOOL, [IPT], True,
                                           f(lambda m: getattr(_addr(m), method)()))])

    def url_get(name: str, oid: str, getter: Callable[[Any], str]) -> Any:
        return cel.FunctionDecl(name, [_ov(oid, T.STRING, [URLT], True, f(getter))])

    return [
        cel.FunctionDecl("ip", [_ov("string_to_ip", IPT, [T.STRING], impl=f(_ip)),
                                _ov("cidr_ip", IPT, [CIDRT], True, f(_cidr_ip))]),
        cel.FunctionDecl("isIP", [_ov("is_ip", T.BOOL, [T.STRING], impl=f(_is_ip))]),
        cel.FunctionDecl("ip.isCanonical", [_ov("ip_is_canonical", T.BOOL, [T.STRING],
                                                impl=f(_ip_is_canonical))]),
        cel.FunctionDecl("family", [_ov("ip_family", T.INT, [IPT], True, f(_family))]),
        ip_pred("isUnspecified", "ip_is_unspecified", "is_unspecified"),
        ip_pred("isLoopback", "ip_is_loopback", "is_loopback"),
        ip_pred("isLinkLocalMulticast", "ip_is_link_local_multicast", "is_link_local_multicast"),
        ip_pred("isLinkLocalUnicast", "ip_is_link_local_unicast", "is_link_local_unicast"),
        ip_pred("isGlobalUnicast", "ip_is_global_unicast", "is_global_unicast"),
        cel.FunctionDecl("cidr", [_ov("string_to_cidr", CIDRT, [T.STRING], impl=f(_cidr))]),
        cel.FunctionDecl("isCIDR", [_ov("is_cidr", T.BOOL, [T.STRING], impl=f(_is_cidr))]),
        cel.FunctionDecl("containsIP", [
            _ov("cidr_contains_ip_string", T.BOOL, [CIDRT, T.STRING], True, f(_contains_ip)),
            _ov("cidr_contains_ip_ip", T.BOOL, [CIDRT, IPT], True, f(_contains_ip))]),
        cel.FunctionDecl("containsCIDR", [
            _ov("cidr_contains_cidr_string", T.BOOL, [CIDRT, T.STRING], True, f(_contains_cidr)),
            _ov("cidr_contains_cidr", T.BOOL, [CIDRT, CIDRT], True, f(_contains_cidr))]),
        cel.FunctionDecl("prefixLength", [_ov("cidr_prefix_length", T.INT, [CIDRT], True,
                                              f(lambda m: _prefix(m).length))]),
        cel.FunctionDecl("masked", [_ov("cidr_masked", CIDRT, [CIDRT], True, f(_masked))]),
        cel.FunctionDecl("url", [_ov("string_to_url", URLT, [T.STRING], impl=f(_url))]),
        cel.FunctionDecl("isURL", [_ov("is_url_string", T.BOOL, [T.STRING], impl=f(_is_url))]),
        url_get("getScheme", "url_get_scheme", lambda m: _parsed(m).scheme),
        url_get("getHost", "url_get_host", lambda m: _parsed(m).host),
        url_get("getHostname", "url_get_hostname", lambda m: _parsed(m).hostname()),
        url_get("getPort", "url_get_port", lambda m: _parsed(m).port()),
        url_get("getEscapedPath", "url_get_escaped_path", lambda m: _parsed(m).escaped_path()),
        cel.FunctionDecl("getQuery", [_ov("url_get_query", T.Map(T.STRING, T.List(T.STRING)),
                                          [URLT], True, f(lambda m: _parsed(m).query()))]),
    ]


_ORDERING_TYPES = (("bool", T.BOOL), ("int64", T.INT), ("uint64", T.UINT), ("double", T.DOUBLE),
                   ("string", T.STRING), ("bytes", T.BYTES), ("timestamp", T.TIMESTAMP),
                   ("duration", T.DURATION))
_NUMERIC = (("int64", T.INT), ("uint64", T.UINT), ("double", T.DOUBLE))
_ORDERING = (("_<_", "less"), ("_<=_", "less_equals"), ("_>_", "greater"),
             ("_>=_", "greater_equals"))
_STRING_SOURCES = (("string", T.STRING), ("int64", T.INT), ("uint64", T.UINT), ("double", T.DOUBLE),
                   ("bytes", T.BYTES), ("bool", T.BOOL), ("timestamp", T.TIMESTAMP),
                   ("duration", T.DURATION))
#: standard-library functions the check environment declares itself (see check_decls)
REPLACED_STDLIB = tuple(name for name, _ in _ORDERING) + ("string",)


def check_decls() -> list[Any]:
    """Declarations for the type-checking environment (no implementations).

    The ordering operators get cel-go's CrossTypeNumericComparisons overloads
    (``5 < 10.0``), which cel-cpp's checker lacks although its runtime has them;
    ``string`` gets the IP and CIDR conversions.
    """
    decls = _shared_decls(impls=False)
    for name, prefix in _ORDERING:
        overloads = [_ov(f"{prefix}_{tn}", T.BOOL, [t, t]) for tn, t in _ORDERING_TYPES]
        overloads += [_ov(f"{prefix}_{an}_{bn}", T.BOOL, [a, b])
                      for an, a in _NUMERIC for bn, b in _NUMERIC if an != bn]
        decls.append(cel.FunctionDecl(name, overloads))
    decls.append(cel.FunctionDecl("string", [
        *(_ov(f"{tn}_to_string", T.STRING, [t]) for tn, t in _STRING_SOURCES),
        _ov("ip_to_string", T.STRING, [IPT]), _ov("cidr_to_string", T.STRING, [CIDRT])]))
    for const in FORMATS:
        decls.append(cel.FunctionDecl(f"format.{const}", [_ov(f"format.{const}", FMTT, [])]))
    return decls


def check_extension() -> Any:
    """indexOf/lastIndexOf on lists, added to the strings extension's overloads."""
    def overloads(kind: str) -> list[Any]:
        return [_ov(f"list_a_{kind}_int", T.INT, [LIST_OF_A, TYPE_PARAM_A], True)]

    return cel.CelExtension("kubernetes.lists.index", [
        cel.FunctionDecl("indexOf", overloads("index_of")),
        cel.FunctionDecl("lastIndexOf", overloads("last_index_of"))])


#: the format library's functions with optional results, declared in the check environment's
#: YAML configuration: the Python binding cannot spell optional_type(...) in a FunctionDecl,
#: the configuration can, and so the results are real optionals to the checker (``==
#: optional.none()``, ``hasValue()``, ``orValue()``, ``optMap()`` type-check as upstream's)
OPTIONAL_RESULT_FUNCTIONS_YAML = f"""functions:
  - name: validate
    overloads:
      - id: format-validate
        target:
          type_name: {_types.FORMAT_TYPE}
        args:
          - type_name: string
        return:
          type_name: optional_type
          params:
            - type_name: list
              params:
                - type_name: string
  - name: format.named
    overloads:
      - id: format-named
        args:
          - type_name: string
        return:
          type_name: optional_type
          params:
            - type_name: {_types.FORMAT_TYPE}
"""


_RUNTIME_KINDS = (T.INT, T.UINT, T.DOUBLE, T.BOOL, T.STRING, T.BYTES, T.DURATION, T.TIMESTAMP,
                  T.NULL, QT, T.List(T.DYN), T.Map(T.DYN, T.DYN))


# --- strings that grow --------------------------------------------------------------------


def _grown(length: int, bound: int = limits.MAX_STRING_LENGTH) -> None:
    """Refuse a string (or list) longer than its bound in :mod:`~kubectl_dra.cel.limits` before it
    is built (nested ``replace()`` calls grow a few characters into terabytes)."""
    if length > bound:
        raise LibraryError(limits.ACTUAL_COST_EXCEEDED)


def _replace(text: str, old: str, new: str, count: int = -1) -> str:
    """strings.replace (Go's ``strings.Replace``: ``count < 0`` replaces all; an empty ``old``
    matches before each character and at the end), its result's length checked first."""
    if count == 0:
        return text
    found = text.count(old) if old else len(text) + 1
    if count > 0:
        found = min(found, count)
    _grown(len(text) + found * (len(new) - len(old)))
    return text.replace(old, new, count if count > 0 else -1)


def _add_string(left: str, right: str) -> str:
    """String concatenation, its result's length checked first."""
    _grown(len(left) + len(right))
    return left + right


def _list_growth_ok(length: int) -> bool:
    """Whether a list concatenation may build a list of ``length`` elements (an error past the
    bound, as a string's: upstream prices both by size). Only the length is handed to Python:
    the concatenation itself stays in the engine, whose values (durations and timestamps to
    the nanosecond, optionals, type values) do not all survive a trip through Python."""
    _grown(length, limits.MAX_LIST_LENGTH)
    return True


def runtime_decls() -> list[Any]:
    """Implementations for the evaluation environment."""
    def index_decl(name: str, impl: Callable[..., Any]) -> Any:
        overloads = [_ov(f"{name}_string", T.INT, [T.STRING, T.STRING], impl=impl),
                     _ov(f"{name}_string_int", T.INT, [T.STRING, T.STRING, T.INT], impl=impl)]
        overloads += [_ov(f"{name}_list_{i}", T.INT, [T.List(T.DYN), t], impl=impl)
                      for i, t in enumerate(_RUNTIME_KINDS)]
        return cel.FunctionDecl(name, overloads)

    return _shared_decls(impls=True) + [
        cel.FunctionDecl(STRING_FUNCTION, [_ov("dra_message_to_string", T.STRING, [IPT],
                                               impl=_to_string)]),
        index_decl(INDEX_OF_FUNCTION, _index_of),
        index_decl(LAST_INDEX_OF_FUNCTION, _last_index_of),
        cel.FunctionDecl(FORMAT_KNOWN_FUNCTION, [_ov("dra_format_known", T.BOOL, [T.STRING],
                                                     impl=_format_known)]),
        cel.FunctionDecl(FORMAT_OF_FUNCTION, [_ov("dra_format_of", FMTT, [T.STRING],
                                                  impl=_format_of)]),
        cel.FunctionDecl(STRING_FORMAT_FUNCTION, [
            _ov("dra_string_format", T.STRING, [T.STRING, T.List(T.DYN)], impl=format_string)]),
        cel.FunctionDecl(FORMAT_VALIDATE_FUNCTION, [
            _ov("dra_format_validate", T.List(T.STRING), [FMTT, T.STRING], impl=_format_validate)]),
        cel.FunctionDecl(REPLACE_FUNCTION, [
            _ov("dra_replace", T.STRING, [T.STRING, T.STRING, T.STRING], impl=_replace),
            _ov("dra_replace_int", T.STRING, [T.STRING, T.STRING, T.STRING, T.INT], impl=_replace)]),
        cel.FunctionDecl(ADD_STRING_FUNCTION, [
            _ov("dra_add_string", T.STRING, [T.STRING, T.STRING], impl=_add_string)]),
        cel.FunctionDecl(LIST_GROWTH_FUNCTION, [
            _ov("dra_list_growth_ok", T.BOOL, [T.INT], impl=_list_growth_ok)]),
    ]


def runtime_extension() -> Any:
    """cel.@mapInsert, which cel-expr-python's two-variable comprehensions lack at runtime.

    (Equality cannot be extended the same way: declaring any ``_==_`` overload here hides
    the engine's own equality for every type.)
    """
    return cel.CelExtension("kubernetes.dra.runtime", [cel.FunctionDecl(MAP_INSERT_FUNCTION, [
        _ov("@mapInsert_map_key_value", T.Map(T.DYN, T.DYN), [T.Map(T.DYN, T.DYN), T.DYN, T.DYN],
            impl=_map_insert),
        _ov("@mapInsert_map_map", T.Map(T.DYN, T.DYN), [T.Map(T.DYN, T.DYN), T.Map(T.DYN, T.DYN)],
            impl=_map_insert)])])


__all__ = ["check_decls", "check_extension", "runtime_decls", "runtime_extension"]
