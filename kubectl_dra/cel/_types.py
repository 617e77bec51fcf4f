"""Proto message types that stand in for Kubernetes' opaque CEL types.

cel-expr-python cannot carry custom Python objects as CEL values, only proto
messages. So ``kubernetes.Quantity`` and ``kubernetes.Semver`` are small messages
whose fields hold a *canonical* form: CEL's built-in message equality then agrees
with ``Quantity.Equal`` / ``Semver.Equal`` upstream. ``kubernetes.DRADevice`` is
only used by the type checker, so that ``device.foo`` and result types behave as
in upstream's typed ``device`` object. The descriptors are built at import time
(no protoc step).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf import struct_pb2  # noqa: F401  (registers google/protobuf/struct.proto)

PACKAGE = "kubernetes"
QUANTITY_TYPE = "kubernetes.Quantity"
SEMVER_TYPE = "kubernetes.Semver"
DEVICE_TYPE = "kubernetes.DRADevice"
#: the apiserver's opaque net.IP / net.CIDR and object kubernetes.URL / kubernetes.NamedFormat;
#: each message holds one canonical text, so message equality is upstream's Equal
IP_TYPE = "net.IP"
CIDR_TYPE = "net.CIDR"
URL_TYPE = "kubernetes.URL"
FORMAT_TYPE = "kubernetes.NamedFormat"
#: how string.format() receives a duration argument: its text from the engine's string()
#: (exact to the nanosecond; the binding would hand the formatter a timedelta in microseconds)
DURATION_TEXT_TYPE = "kubernetes.DurationText"
#: the device type without ``allowMultipleAllocations`` (DRAConsumableCapacity off)
DEVICE_TYPE_NO_MULTI = "kubernetes.DRADeviceV131"

_STRING, _INT64, _BOOL, _MESSAGE = 9, 3, 8, 11
_OPTIONAL, _REPEATED = 1, 3


def _add_struct_map(msg: descriptor_pb2.DescriptorProto, name: str, number: int) -> None:
    """Add ``map<string, google.protobuf.Struct> name`` (CEL sees map(string, map(string, dyn)))."""
    entry = msg.nested_type.add(name=name[0].upper() + name[1:] + "Entry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=_STRING, label=_OPTIONAL)
    entry.field.add(name="value", number=2, type=_MESSAGE, label=_OPTIONAL,
                    type_name=".google.protobuf.Struct")
    msg.field.add(name=name, number=number, type=_MESSAGE, label=_REPEATED,
                  type_name=f".{PACKAGE}.{msg.name}.{entry.name}")


def _build_file() -> descriptor_pb2.FileDescriptorProto:
    """Describe the Quantity, Semver and DRADevice messages."""
    fdp = descriptor_pb2.FileDescriptorProto(
        name="kubectl_dra/cel/kubernetes_types.proto", package=PACKAGE, syntax="proto3",
        dependency=["google/protobuf/struct.proto"])
    # Every field is a function of the value, so message equality stays value equality.
    # (u, s) is exact; (x, i, n) lets rewritten comparisons run natively when the value
    # is exactly i + n/1e9 with i an int64 (x=True).
    quantity = fdp.message_type.add(name="Quantity")
    quantity.field.add(name="u", number=1, type=_STRING, label=_OPTIONAL)  # unscaled digits
    quantity.field.add(name="s", number=2, type=_INT64, label=_OPTIONAL)   # decimal exponent
    quantity.field.add(name="x", number=3, type=_BOOL, label=_OPTIONAL)    # i/n are exact
    quantity.field.add(name="i", number=4, type=_INT64, label=_OPTIONAL)   # floor(value)
    quantity.field.add(name="n", number=5, type=_INT64, label=_OPTIONAL)   # nanos above floor
    # v is the version without build metadata; (x, ma, mi, pa) allow native comparison
    # when there is no pre-release part and the numbers fit int64 (x=True).
    semver = fdp.message_type.add(name="Semver")
    semver.field.add(name="v", number=1, type=_STRING, label=_OPTIONAL)
    semver.field.add(name="x", number=2, type=_BOOL, label=_OPTIONAL)
    semver.field.add(name="ma", number=3, type=_INT64, label=_OPTIONAL)
    semver.field.add(name="mi", number=4, type=_INT64, label=_OPTIONAL)
    semver.field.add(name="pa", number=5, type=_INT64, label=_OPTIONAL)
    for type_name, multi in ((DEVICE_TYPE, True), (DEVICE_TYPE_NO_MULTI, False)):
        device = fdp.message_type.add(name=type_name.split(".", 1)[1])
        device.field.add(name="driver", number=1, type=_STRING, label=_OPTIONAL)
        if multi:
            device.field.add(name="allowMultipleAllocations", number=2, type=_BOOL,
                             label=_OPTIONAL)
        _add_struct_map(device, "attributes", 3)
        _add_struct_map(device, "capacity", 4)
    return fdp


def _build_net_file() -> descriptor_pb2.FileDescriptorProto:
    """Describe net.IP and net.CIDR (package ``net``, as upstream's type names)."""
    fdp = descriptor_pb2.FileDescriptorProto(
        name="kubectl_dra/cel/net_types.proto", package="net", syntax="proto3")
    for name in ("IP", "CIDR"):
        msg = fdp.message_type.add(name=name)
        msg.field.add(name="t", number=1, type=_STRING, label=_OPTIONAL)  # canonical text
    return fdp


def _build_k8s_extra_file() -> descriptor_pb2.FileDescriptorProto:
    """Describe kubernetes.URL (text = Go's URL.String()), kubernetes.NamedFormat (name) and
    kubernetes.DurationText (a duration's exact text, see DURATION_TEXT_TYPE)."""
    fdp = descriptor_pb2.FileDescriptorProto(
        name="kubectl_dra/cel/kubernetes_extra_types.proto", package=PACKAGE, syntax="proto3")
    url = fdp.message_type.add(name="URL")
    url.field.add(name="t", number=1, type=_STRING, label=_OPTIONAL)
    named = fdp.message_type.add(name="NamedFormat")
    named.field.add(name="n", number=1, type=_STRING, label=_OPTIONAL)
    exact = fdp.message_type.add(name="DurationText")
    exact.field.add(name="t", number=1, type=_STRING, label=_OPTIONAL)
    return fdp


def _register() -> descriptor_pool.DescriptorPool:
    """Add our files to the default pool once (idempotent across reloads)."""
    pool = descriptor_pool.Default()
    for type_name, build in ((QUANTITY_TYPE, _build_file), (IP_TYPE, _build_net_file),
                             (URL_TYPE, _build_k8s_extra_file)):
        try:
            pool.FindMessageTypeByName(type_name)
        except KeyError:
            pool.Add(build())
    return pool


POOL = _register()
QuantityMsg: Any = message_factory.GetMessageClass(POOL.FindMessageTypeByName(QUANTITY_TYPE))
SemverMsg: Any = message_factory.GetMessageClass(POOL.FindMessageTypeByName(SEMVER_TYPE))
IPMsg: Any = message_factory.GetMessageClass(POOL.FindMessageTypeByName(IP_TYPE))
CIDRMsg: Any = message_factory.GetMessageClass(POOL.FindMessageTypeByName(CIDR_TYPE))
URLMsg: Any = message_factory.GetMessageClass(POOL.FindMessageTypeByName(URL_TYPE))
FormatMsg: Any = message_factory.GetMessageClass(POOL.FindMessageTypeByName(FORMAT_TYPE))


def canonical_decimal(value: Fraction) -> tuple[str, int]:
    """Return (unscaled digits without trailing zeros, exponent) for a decimal value."""
    if value == 0:
        return "0", 0
    num, den = value.numerator, value.denominator
    twos = fives = 0
    d = den
    while d % 2 == 0:
        d //= 2
        twos += 1
    while d % 5 == 0:
        d //= 5
        fives += 1
    if d != 1:  # not a decimal; never produced by Kubernetes quantities
        return f"{num}/{den}", 0
    k = max(twos, fives)
    unscaled = num * 10**k // den
    exp = -k
    while unscaled % 10 == 0:
        unscaled //= 10
        exp += 1
    return str(unscaled), exp


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def make_quantity_msg(u: str, s: int) -> Any:
    """The Quantity message for canonical (unscaled, exponent), with its native-compare fields
    when the value fits them (never computing ``10**s`` for a value that cannot)."""
    if "/" in u or s < -9 or len(u.lstrip("-")) + s > 19:
        return QuantityMsg(u=u, s=s)
    nanos = int(u) * 10 ** (s + 9)
    whole, frac = divmod(nanos, 10**9)
    if not _INT64_MIN <= whole <= _INT64_MAX:
        return QuantityMsg(u=u, s=s)
    return QuantityMsg(u=u, s=s, x=True, i=whole, n=frac)


def quantity_msg_from_value(value: Fraction) -> Any:
    """Build the canonical Quantity message for a numeric value."""
    u, s = canonical_decimal(value)
    return make_quantity_msg(u, s)


def make_semver_msg(version: Any) -> Any:
    """The Semver message of a kubectl_dra.semver.Version."""
    text = str(version).split("+", 1)[0]
    numbers = (version.major, version.minor, version.patch)
    if version.pre or any(n > _INT64_MAX for n in numbers):
        return SemverMsg(v=text)
    return SemverMsg(v=text, x=True, ma=numbers[0], mi=numbers[1], pa=numbers[2])


@lru_cache(maxsize=4096)
def _value_of(u: str, s: int) -> Fraction:
    """Numeric value of canonical (u, s)."""
    if "/" in u:
        return Fraction(u)
    return Fraction(int(u)) * Fraction(10) ** s


def quantity_value(msg: Any) -> Fraction:
    """Numeric value of a Quantity message."""
    return _value_of(msg.u, msg.s)
