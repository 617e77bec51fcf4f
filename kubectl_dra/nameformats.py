"""Name and value formats of apimachinery (``k8s.io/apimachinery/pkg/util/validation``), below
both :mod:`kubectl_dra.cel` (CEL's named formats) and :mod:`kubectl_dra.validation` (field checks).

Each ``is_*`` function returns upstream's messages for a text that does not have the format
(empty when it does), worded as upstream words them; the field checks of :mod:`kubectl_dra.validation.names` turn
them into field errors. ``is_semver`` answers whether a text is a semantic version as the
API server's parser accepts it.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "DNS1123_LABEL_MAX", "DNS1123_SUBDOMAIN_MAX", "LABEL_VALUE_MAX", "QUALIFIED_NAME_MAX", "dns1123_label_ok",
    "dns1123_subdomain_ok",
    "is_c_identifier", "is_dns1123_label", "is_dns1123_subdomain", "is_qualified_name", "is_semver",
    "is_valid_label_value",
]


DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE = re.compile(rf"^{_DNS1123_LABEL_FMT}\Z")
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + r"(\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_RE = re.compile(rf"^{_DNS1123_SUBDOMAIN_FMT}\Z")
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_RE = re.compile(rf"^{_QUALIFIED_NAME_FMT}\Z")
_LABEL_VALUE_RE = re.compile(rf"^({_QUALIFIED_NAME_FMT})?\Z")
_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_C_IDENTIFIER_RE = re.compile(rf"^{_C_IDENTIFIER_FMT}\Z")
_NUM = r"(0|[1-9][0-9]*)"
_PRE_ID = r"(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_SEMVER_RE = re.compile(
    rf"^{_NUM}\.{_NUM}\.{_NUM}(-{_PRE_ID}(\.{_PRE_ID})*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?\Z"
)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Upstream's ``RegexError`` wording: message, examples, regex."""
    text = msg
    if examples:
        text += " (e.g. " + ",  or ".join(f"'{e}'" for e in examples) + ", "
    else:
        text += " ("
    return text + f"regex used for validation is '{fmt}')"


def _max_len_error(length: int) -> str:
    """Upstream's MaxLenError wording."""
    return f"must be no more than {length} characters"


def _format_errors(value: str, max_len: int | None, pattern: re.Pattern[str], regex_error: str) -> list[str]:
    """Upstream's two checks of a name format: its length limit, then its regular expression."""
    errs: list[str] = []
    if max_len is not None and len(value) > max_len:
        errs.append(_max_len_error(max_len))
    if not pattern.match(value):
        errs.append(regex_error)
    return errs


_DNS1123_LABEL_ERROR = _regex_error(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character",
    _DNS1123_LABEL_FMT, "my-name", "123-abc",
)


_DNS1123_SUBDOMAIN_ERROR = _regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character",
    _DNS1123_SUBDOMAIN_FMT, "example.com",
)


_QUALIFIED_NAME_ERROR = _regex_error(
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character",
    _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc",
)


_LABEL_VALUE_ERROR = _regex_error(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character",
    f"({_QUALIFIED_NAME_FMT})?", "MyValue", "my_value", "12345",
)


_C_IDENTIFIER_ERROR = _regex_error(
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_'",
    _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName",
)


def is_dns1123_label(value: str) -> list[str]:
    """Messages for a value that is not a lower-case RFC 1123 label (≤63)."""
    return _format_errors(value, DNS1123_LABEL_MAX, _DNS1123_LABEL_RE, _DNS1123_LABEL_ERROR)


def dns1123_label_ok(value: str) -> bool:
    """Whether ``value`` is a lower-case RFC 1123 label (:func:`is_dns1123_label` finds nothing)."""
    return len(value) <= DNS1123_LABEL_MAX and _DNS1123_LABEL_RE.match(value) is not None


def dns1123_subdomain_ok(value: str) -> bool:
    """Whether ``value`` is a lower-case RFC 1123 subdomain (:func:`is_dns1123_subdomain` finds nothing)."""
    return len(value) <= DNS1123_SUBDOMAIN_MAX and _DNS1123_SUBDOMAIN_RE.match(value) is not None


def is_dns1123_subdomain(value: str) -> list[str]:
    """Messages for a value that is not a lower-case RFC 1123 subdomain (≤253)."""
    return _format_errors(value, DNS1123_SUBDOMAIN_MAX, _DNS1123_SUBDOMAIN_RE, _DNS1123_SUBDOMAIN_ERROR)


def is_qualified_name(value: str) -> list[str]:
    """Messages for a value that is not ``[prefix/]name`` (label keys, annotation keys, finalizers)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return ["a qualified name " + _QUALIFIED_NAME_ERROR
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    else:
        errs.extend("name part " + m for m in _format_errors(name, QUALIFIED_NAME_MAX, _QUALIFIED_NAME_RE,
                                                              _QUALIFIED_NAME_ERROR))
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """Messages for a value that is not a label value (empty or ≤63 qualified-name characters)."""
    return _format_errors(value, LABEL_VALUE_MAX, _LABEL_VALUE_RE, _LABEL_VALUE_ERROR)


def is_c_identifier(value: str) -> list[str]:
    """Messages for a value that is not a C identifier."""
    return _format_errors(value, None, _C_IDENTIFIER_RE, _C_IDENTIFIER_ERROR)


@functools.lru_cache(maxsize=4096)
def is_semver(value: str) -> bool:
    """True for a semantic version 2.0.0 string as upstream's parser accepts it (memoised: a
    pure function of the text, and a slice's devices often share their versions)."""
    return bool(_SEMVER_RE.match(value))
