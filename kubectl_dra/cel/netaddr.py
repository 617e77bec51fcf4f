"""IP addresses and prefixes parsed and printed as Go's ``net/netip`` does.

The Kubernetes CEL ``ip``/``cidr`` libraries are thin layers over ``netip.ParseAddr``
and ``netip.ParsePrefix``; users read their error texts, and what they accept differs
from Python's :mod:`ipaddress` (zones, IPv4-mapped IPv6, prefix digits). This module
re-implements those rules and messages; addresses are (family, 128-bit int) pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


class AddrError(ValueError):
    """An address or prefix that Go's netip rejects; the message is Go's text."""


def go_quote(text: str) -> str:
    """``strconv.Quote``: a double-quoted Go string literal."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append("\\" + "abfnrtv"["\a\b\f\n\r\t\v".index(ch)])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif not ch.isprintable():
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _addr_error(text: str, msg: str, at: str | None = None) -> AddrError:
    """netip's parseAddrError text."""
    where = f" (at {go_quote(at)})" if at is not None and at != "" else ""
    return AddrError(f"ParseAddr({go_quote(text)}): {msg}{where}")


@dataclass(frozen=True)
class Addr:
    """An IPv4 (family 4, 32 bits) or IPv6 (family 6, 128 bits) address; zone kept for errors."""

    family: int
    value: int
    zone: str = ""

    @property
    def bits(self) -> int:
        """Address length in bits."""
        return 32 if self.family == 4 else 128

    def is_4in6(self) -> bool:
        """An IPv4-mapped IPv6 address (::ffff:a.b.c.d)."""
        return self.family == 6 and self.value >> 32 == 0xFFFF

    def __str__(self) -> str:
        if self.family == 4:
            return ".".join(str((self.value >> s) & 0xFF) for s in (24, 16, 8, 0))
        text = _ipv6_text(self.value)
        return f"{text}%{self.zone}" if self.zone else text

    def is_unspecified(self) -> bool:
        return self.value == 0

    def is_loopback(self) -> bool:
        if self.family == 4:
            return self.value >> 24 == 127
        return self.value == 1

    def is_multicast(self) -> bool:
        if self.family == 4:
            return self.value >> 28 == 0xE
        return self.value >> 120 == 0xFF

    def is_link_local_multicast(self) -> bool:
        if self.family == 4:
            return self.value >> 8 == 0xE00000
        return (self.value >> 112) & 0xFF0F == 0xFF02

    def is_link_local_unicast(self) -> bool:
        if self.family == 4:
            return self.value >> 16 == 0xA9FE
        return self.value >> 118 == 0xFE80 >> 6

    def is_global_unicast(self) -> bool:
        if self.family == 4 and self.value in (0, 0xFFFFFFFF):
            return False
        return not (self.value == 0 or self.is_loopback() or self.is_multicast()
                    or self.is_link_local_unicast())


def _ipv6_text(value: int) -> str:
    """RFC 5952 text: lower-case hex, the longest run (>= 2) of zero groups as ``::``."""
    groups = [(value >> (112 - 16 * i)) & 0xFFFF for i in range(8)]
    best_start, best_len, i = -1, 0, 0
    while i < 8:
        if groups[i] == 0:
            j = i
            while j < 8 and groups[j] == 0:
                j += 1
            if j - i > best_len and j - i >= 2:
                best_start, best_len = i, j - i
            i = j
        else:
            i += 1
    hexes = [format(g, "x") for g in groups]
    if best_start < 0:
        return ":".join(hexes)
    return ":".join(hexes[:best_start]) + "::" + ":".join(hexes[best_start + best_len:])


def _ipv4_fields(text: str, part: str) -> int:
    """Go's parseIPv4Fields over ``part`` (errors quote the whole input ``text``)."""
    fields: list[int] = []
    value = digits = 0
    for i, ch in enumerate(part):
        if "0" <= ch <= "9":
            if digits == 1 and value == 0:
                raise _addr_error(text, "IPv4 field has octet with leading zero")
            value = value * 10 + ord(ch) - 48
            digits += 1
            if value > 255:
                raise _addr_error(text, "IPv4 field has value >255")
        elif ch == ".":
            if i == 0 or i == len(part) - 1 or part[i - 1] == ".":
                raise _addr_error(text, "IPv4 field must have at least one digit", part[i:])
            if len(fields) == 3:
                raise _addr_error(text, "IPv4 address too long")
            fields.append(value)
            value = digits = 0
        else:
            raise _addr_error(text, "unexpected character", part[i:])
    if len(fields) < 3:
        raise _addr_error(text, "IPv4 address too short")
    fields.append(value)
    return (fields[0] << 24) | (fields[1] << 16) | (fields[2] << 8) | fields[3]


_HEX = {c: int(c, 16) for c in "0123456789abcdefABCDEF"}


def _parse_ipv6(text: str) -> Addr:
    """Go's parseIPv6."""
    s, zone = text, ""
    if "%" in s:
        s, zone = s.split("%", 1)
        if zone == "":
            raise _addr_error(text, "zone must be a non-empty string")
    out = [0] * 16
    ellipsis = -1
    if s.startswith("::"):
        ellipsis = 0
        s = s[2:]
        if s == "":
            return Addr(6, 0, zone)
    i = 0
    while i < 16:
        off = acc = 0
        while off < len(s) and s[off] in _HEX:
            acc = (acc << 4) + _HEX[s[off]]
            if off > 3:
                raise _addr_error(text, "each group must have 4 or less digits", s)
            if acc > 0xFFFF:
                raise _addr_error(text, "IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            raise _addr_error(text, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == ".":
            if ellipsis < 0 and i != 12:
                raise _addr_error(
                    text, "embedded IPv4 address must replace the final 2 fields of the address", s)
            if i + 4 > 16:
                raise _addr_error(
                    text, "too many hex fields to fit an embedded IPv4 at the end of the address", s)
            v4 = _ipv4_fields(text, s)
            out[i:i + 4] = [(v4 >> 24) & 0xFF, (v4 >> 16) & 0xFF, (v4 >> 8) & 0xFF, v4 & 0xFF]
            i += 4
            s = ""
            break
        out[i], out[i + 1] = acc >> 8, acc & 0xFF
        i += 2
        s = s[off:]
        if s == "":
            break
        if s[0] != ":":
            raise _addr_error(text, "unexpected character, want colon", s)
        if len(s) == 1:
            raise _addr_error(text, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise _addr_error(text, "multiple :: in address", s)
            ellipsis = i
            s = s[1:]
            if s == "":
                break
    if s != "":
        raise _addr_error(text, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise _addr_error(text, "address string too short")
        n = 16 - i
        out = out[:ellipsis] + [0] * n + out[ellipsis:i]
    elif ellipsis >= 0:
        raise _addr_error(text, "the :: must expand to at least one field of zeros", s)
    return Addr(6, int.from_bytes(bytes(out), "big"), zone)


@lru_cache(maxsize=4096)
def parse_addr(text: str) -> Addr:
    """``netip.ParseAddr``."""
    for ch in text:
        if ch == ".":
            return Addr(4, _ipv4_fields(text, text))
        if ch == ":":
            return _parse_ipv6(text)
        if ch == "%":
            raise _addr_error(text, "missing IPv6 address")
    raise _addr_error(text, "unable to parse IP")


@dataclass(frozen=True)
class Prefix:
    """An address and a prefix length (not masked, as netip.Prefix)."""

    addr: Addr
    length: int

    def __str__(self) -> str:
        return f"{self.addr}/{self.length}"

    def masked(self) -> "Prefix":
        """The prefix with host bits cleared."""
        host = self.addr.bits - self.length
        return Prefix(Addr(self.addr.family, (self.addr.value >> host) << host), self.length)

    def contains(self, addr: Addr) -> bool:
        """Whether ``addr`` (same family) lies inside the prefix."""
        if addr.family != self.addr.family or addr.zone:
            return False
        host = self.addr.bits - self.length
        return addr.value >> host == self.addr.value >> host

    def overlaps(self, other: "Prefix") -> bool:
        """Whether the two prefixes share any address."""
        if other.addr.family != self.addr.family:
            return False
        host = self.addr.bits - min(self.length, other.length)
        return self.addr.value >> host == other.addr.value >> host


@lru_cache(maxsize=4096)
def parse_prefix(text: str) -> Prefix:
    """``netip.ParsePrefix``."""
    def fail(msg: str) -> AddrError:
        return AddrError(f"netip.ParsePrefix({go_quote(text)}): {msg}")

    cut = text.rfind("/")
    if cut < 0:
        raise fail("no '/'")
    try:
        addr = parse_addr(text[:cut])
    except AddrError as err:
        raise fail(str(err)) from None
    if addr.family == 6 and addr.zone:
        raise fail("IPv6 zones cannot be present in a prefix")
    bits_text = text[cut + 1:]
    if (len(bits_text) > 1 and not "1" <= bits_text[0] <= "9") or not bits_text.isascii() \
            or not bits_text.lstrip("+-").isdigit():
        raise fail("bad bits after slash: " + go_quote(bits_text))
    bits = int(bits_text)
    if not 0 <= bits <= addr.bits:
        raise fail("prefix length out of range")
    return Prefix(addr, bits)
