"""Static worst-case cost estimate of a DRA CEL expression.

apiserver validation rejects selectors whose *estimated* cost exceeds 1,000,000.
This module re-implements, in Python over the checked AST, the estimation rules
of cel-go's checker (sizes and costs of literals, selects, calls, comprehensions,
``cel.bind``), the Kubernetes library cost rules (string, regex, list and quantity
functions) and the DRA rules: ``device`` field sizes from the API limits and
``includes()`` priced as a 48-item scan. Costs use cel-go's constants so the
numbers equal upstream's ``MaxCost``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from kubectl_dra.cel import limits

U64 = 2**64 - 1
STRING_TRAVERSAL = 0.1  # cost per character when traversing a string
REGEX_LENGTH = 0.25     # cost factor per regex character
SELECT_IDENT = 1
LIST_CREATE = 10
MAP_CREATE = 30
STRUCT_CREATE = 40
PRESENCE_TEST = 0       # DRA uses PresenceTestHasCost(false)
ACCUMULATORS = ("@result", "__result__")

# DRA API limits (k8s.io/api/resource/v1), named as the estimator uses them
MAX_DOMAIN = limits.MAX_DOMAIN_LENGTH
MAX_ID = limits.MAX_ID_LENGTH
MAX_DRIVER = limits.MAX_DRIVER_LENGTH
MAX_ATTRS_PER_DEVICE = limits.MAX_ATTRIBUTES_PER_DEVICE
MAX_ATTR_VALUE = limits.MAX_ATTRIBUTE_VALUE_LENGTH
MAX_ATTR_VALUES = limits.MAX_ATTRIBUTE_VALUES
ATTRIBUTE_MAX = max(MAX_ATTR_VALUE, MAX_ATTR_VALUES)


def _add(a: int, b: int) -> int:
    return min(a + b, U64)


def _mul(a: int, b: int) -> int:
    return min(a * b, U64)


def _factor(x: int, f: float) -> int:
    """x * f rounded up, saturating like cel-go."""
    if x > 0 and f > 0 and x > U64 / f:
        return U64
    value = math.ceil(float(x) * f)
    return U64 if value >= 2.0**64 else int(value)


@dataclass(frozen=True)
class Est:
    """A [min, max] range, used both for sizes and for costs."""

    lo: int
    hi: int

    def add(self, o: "Est") -> "Est":
        return Est(_add(self.lo, o.lo), _add(self.hi, o.hi))

    def mul(self, o: "Est") -> "Est":
        return Est(_mul(self.lo, o.lo), _mul(self.hi, o.hi))

    def factor(self, f: float) -> "Est":
        return Est(_factor(self.lo, f), _factor(self.hi, f))

    def union(self, o: "Est") -> "Est":
        return Est(min(self.lo, o.lo), max(self.hi, o.hi))


ZERO = Est(0, 0)
ONE = Est(1, 1)
UNKNOWN = Est(0, U64)


def fixed(n: int) -> Est:
    return Est(n, n)


# --- types --------------------------------------------------------------------------

_PRIM = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}


def kind(t: Any) -> str:
    """cel-go's Kind of a cel.expr.Type."""
    if t is None:
        return "dyn"
    k = t.WhichOneof("type_kind")
    if k == "primitive":
        return _PRIM.get(t.primitive, "dyn")
    if k == "wrapper":
        return _PRIM.get(t.wrapper, "dyn")
    if k == "well_known":
        return {2: "timestamp", 3: "duration"}.get(t.well_known, "any")
    if k == "list_type":
        return "list"
    if k == "map_type":
        return "map"
    if k == "message_type":
        return {"google.protobuf.Struct": "map", "google.protobuf.Value": "dyn",
                "google.protobuf.ListValue": "list"}.get(t.message_type, "struct")
    if k == "abstract_type":
        return "opaque"
    if k == "type_param":
        return "type_param"
    if k == "null":
        return "null"
    if k == "type":
        return "type"
    return "dyn"


def _is_scalar(t: Any) -> bool:
    k = kind(t)
    if k in ("bool", "double", "duration", "int", "timestamp", "uint"):
        return True
    if k == "opaque" and t.abstract_type.name == "optional_type" and t.abstract_type.parameter_types:
        return _is_scalar(t.abstract_type.parameter_types[0])
    return False


def _list_elem(t: Any) -> Any:
    """The element type of a list type (None otherwise)."""
    if t is None:
        return None
    k = t.WhichOneof("type_kind")
    if k == "list_type":
        return t.list_type.elem_type
    if k == "map_type":  # cel-go Parameters()[0] of a map is its key type
        return t.map_type.key_type
    return None


# --- DRA size model (the declared `device` type with API limits) ---------------------


@dataclass
class _Decl:
    """A declared type node: maximum size and children."""

    max: int
    fields: dict[str, "_Decl"] | None = None
    key: "_Decl" | None = None
    elem: "_Decl" | None = None


_ATTRIBUTE = _Decl(ATTRIBUTE_MAX)
_QUANTITY = _Decl(0)
_DEVICE = _Decl(0, fields={
    "driver": _Decl(MAX_DRIVER),
    "allowMultipleAllocations": _Decl(1),
    "attributes": _Decl(MAX_ATTRS_PER_DEVICE, key=_Decl(MAX_DOMAIN), elem=_Decl(
        MAX_ATTRS_PER_DEVICE, key=_Decl(MAX_ID), elem=_ATTRIBUTE)),
    "capacity": _Decl(MAX_ATTRS_PER_DEVICE, key=_Decl(MAX_DOMAIN), elem=_Decl(
        MAX_ATTRS_PER_DEVICE, key=_Decl(MAX_ID), elem=_QUANTITY)),
})


def device_size(path: tuple[str, ...]) -> Est | None:
    """Size bound for a path rooted at ``device`` (DRA's size estimator)."""
    if not path or path[0] != "device":
        return None
    node = _DEVICE
    for name in path[1:]:
        if name in ("@items", "@values"):
            if node.elem is None:
                return None
            node = node.elem
        elif name == "@keys":
            if node.key is None:
                return None
            node = node.key
        else:
            child = (node.fields or {}).get(name)
            if child is None:
                if node.elem is _ATTRIBUTE:
                    node = _ATTRIBUTE
                    continue
                return None
            node = child
    return Est(0, node.max)


# --- the estimator ---------------------------------------------------------------------


@dataclass
class _Node:
    """What call-cost rules see of an argument: path, type and derived size."""

    path: tuple[str, ...] | None
    type: Any
    expr: Any
    size: Est | None


@dataclass
class _Local:
    path: tuple[str, ...]
    size: Est | None
    entry: tuple[str, Est, Est] | None  # (container kind, key size, value size)


class Coster:
    """cel-go's cost walk, with the Kubernetes and DRA estimators plugged in."""

    def __init__(self, checked: Any) -> None:
        self.checked = checked
        self.paths: dict[int, tuple[str, ...]] = {}
        self.sizes: dict[int, Est] = {}
        self.entries: dict[int, tuple[str, Est, Est]] = {}
        self.locals: dict[str, list[_Local]] = {}

    # -- bookkeeping --------------------------------------------------------------------

    def type_of(self, e: Any) -> Any:
        return self.checked.type_map.get(e.id)

    def overloads(self, e: Any) -> list[str]:
        ref = self.checked.reference_map.get(e.id)
        return list(ref.overload_id) if ref is not None else []

    def peek(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def push(self, name: str, local: _Local) -> None:
        self.locals.setdefault(name, []).append(local)

    def pop(self, name: str) -> None:
        stack = self.locals.get(name)
        if stack:
            stack.pop()

    def path_of(self, e: Any) -> tuple[str, ...]:
        if e.WhichOneof("expr_kind") == "ident_expr":
            local = self.peek(e.ident_expr.name)
            if local is not None:
                return local.path
        return self.paths.get(e.id, ())

    def entry_of(self, e: Any) -> tuple[str, Est, Est] | None:
        if e.id in self.entries:
            return self.entries[e.id]
        if e.WhichOneof("expr_kind") == "ident_expr":
            local = self.peek(e.ident_expr.name)
            if local is not None and local.entry is not None:
                return local.entry
        return None

    def size_of(self, e: Any) -> Est | None:
        if e.id in self.sizes:
            return self.sizes[e.id]
        literal = _literal_size(e)
        if literal is not None:
            return literal
        estimated = device_size(self.path_of(e))
        if estimated is not None:
            self.sizes[e.id] = estimated
            return estimated
        if _is_scalar(self.type_of(e)):
            return ONE
        if e.WhichOneof("expr_kind") == "ident_expr":
            local = self.peek(e.ident_expr.name)
            if local is not None and local.size is not None:
                return local.size
        return None

    def size_or_unknown(self, e: Any) -> Est:
        size = self.size_of(e)
        return size if size is not None else UNKNOWN

    def node(self, e: Any) -> _Node:
        path: tuple[str, ...] | None = self.path_of(e)
        if path and path[0] in ACCUMULATORS:
            path = None
        return _Node(path, self.type_of(e), e, self.size_of(e))

    @staticmethod
    def node_size(n: _Node) -> Est:
        """Library rule: derived size, else the DRA estimator, else unknown."""
        if n.size is not None:
            return n.size
        if n.path:
            estimated = device_size(n.path)
            if estimated is not None:
                return estimated
        return UNKNOWN

    # -- expressions --------------------------------------------------------------------

    def cost(self, e: Any) -> Est:
        k = e.WhichOneof("expr_kind")
        if k == "const_expr":
            return ZERO
        if k == "ident_expr":
            local = self.peek(e.ident_expr.name)
            self.paths[e.id] = local.path if local is not None else (e.ident_expr.name,)
            return fixed(SELECT_IDENT)
        if k == "select_expr":
            return self.cost_select(e)
        if k == "call_expr":
            return self.cost_call(e)
        if k == "list_expr":
            return self.cost_list(e)
        if k == "struct_expr":
            if e.struct_expr.message_name:
                total = ZERO
                for entry in e.struct_expr.entries:
                    total = total.add(self.cost(entry.value))
                return total.add(fixed(STRUCT_CREATE))
            return self.cost_map(e)
        if k == "comprehension_expr":
            return self.cost_bind(e) if self.is_bind(e) else self.cost_comprehension(e)
        return ZERO

    def cost_select(self, e: Any) -> Est:
        sel = e.select_expr
        if sel.test_only:
            return fixed(PRESENCE_TEST).add(self.cost(sel.operand))
        total = self.cost(sel.operand)
        if kind(self.type_of(sel.operand)) in ("map", "struct", "type_param"):
            total = total.add(fixed(SELECT_IDENT))
        self.paths[e.id] = self.path_of(sel.operand) + (sel.field,)
        return total

    def cost_list(self, e: Any) -> Est:
        total = ZERO
        elems = e.list_expr.elements
        item = Est(0 if not elems else U64, 0)
        for el in elems:
            total = total.add(self.cost(el))
            item = item.union(self.size_or_unknown(el))
        self.entries[e.id] = ("list", ONE, item)
        return total.add(fixed(LIST_CREATE))

    def cost_map(self, e: Any) -> Est:
        total = ZERO
        entries = e.struct_expr.entries
        key = Est(0 if not entries else U64, 0)
        val = Est(0 if not entries else U64, 0)
        for entry in entries:
            total = total.add(self.cost(entry.map_key)).add(self.cost(entry.value))
            key = key.union(self.size_or_unknown(entry.map_key))
            val = val.union(self.size_or_unknown(entry.value))
        self.entries[e.id] = ("map", key, val)
        return total.add(fixed(MAP_CREATE))

    @staticmethod
    def is_bind(e: Any) -> bool:
        c = e.comprehension_expr
        return (c.iter_range.WhichOneof("expr_kind") == "list_expr"
                and len(c.iter_range.list_expr.elements) == 0
                and c.loop_condition.WhichOneof("expr_kind") == "const_expr"
                and c.loop_condition.const_expr.WhichOneof("constant_kind") == "bool_value"
                and not c.loop_condition.const_expr.bool_value
                and c.accu_var not in ACCUMULATORS)

    def push_local(self, name: str, e: Any) -> None:
        self.push(name, _Local(self.path_of(e), self.size_of(e), self.entry_of(e)))

    def cost_bind(self, e: Any) -> Est:
        c = e.comprehension_expr
        total = self.cost(c.iter_range).add(self.cost(c.accu_init))
        self.push_local(c.accu_var, c.accu_init)
        total = total.add(self.cost(c.result))
        self.pop(c.accu_var)
        size = self.size_of(c.result)
        if size is not None:
            self.sizes[e.id] = size
        entry = self.entry_of(c.result)
        if entry is not None:
            self.entries[e.id] = entry
        return total

    def _push_iter(self, name: str, rng: Any, which: str) -> None:
        """Track an iteration variable: which = 'single' | 'key' | 'value'."""
        entry = self.entry_of(rng)
        container = entry[0] if entry is not None else kind(self.type_of(rng))
        if which == "single":
            if container == "list":
                sub, size = "@items", (entry[2] if entry else None)
            else:
                sub, size = "@keys", (entry[1] if entry else None)
        elif which == "key":
            sub = "@indices" if container == "list" else "@keys"
            size = entry[1] if entry else None
        else:
            sub = "@items" if container == "list" else "@values"
            size = entry[2] if entry else None
        self.push(name, _Local(self.path_of(rng) + (sub,), size, None))

    def cost_comprehension(self, e: Any) -> Est:
        c = e.comprehension_expr
        total = self.cost(c.iter_range).add(self.cost(c.accu_init))
        self.push_local(c.accu_var, c.accu_init)
        if c.iter_var2:
            self._push_iter(c.iter_var, c.iter_range, "key")
            self._push_iter(c.iter_var2, c.iter_range, "value")
        else:
            self._push_iter(c.iter_var, c.iter_range, "single")
        loop = self.cost(c.loop_condition)
        step = self.cost(c.loop_step)
        self.pop(c.iter_var)
        if c.iter_var2:
            self.pop(c.iter_var2)
        total = total.add(self.cost(c.result))
        self.pop(c.accu_var)
        count = self.size_or_unknown(c.iter_range)
        total = total.add(count.mul(step.add(loop)))
        init_kind = c.accu_init.WhichOneof("expr_kind")
        if init_kind == "const_expr":
            size = self.size_of(c.accu_init)
            if size is not None:
                self.sizes[e.id] = size
        elif init_kind == "list_expr" or (init_kind == "struct_expr"
                                          and not c.accu_init.struct_expr.message_name):
            self.sizes[e.id] = count
            step_entry = self.entry_of(c.loop_step)
            if step_entry is not None:
                self.entries[e.id] = step_entry
        return total

    def cost_call(self, e: Any) -> Est:
        call = e.call_expr
        if call.function == "dyn" and len(call.args) == 1:
            arg_cost = self.cost(call.args[0])
            size = self.size_of(call.args[0])
            if size is not None:
                self.sizes[e.id] = size
            entry = self.entry_of(call.args[0])
            if entry is not None:
                self.entries[e.id] = entry
            return ONE.add(arg_cost)
        args = list(call.args)
        arg_costs = [self.cost(a) for a in args]
        arg_nodes = [self.node(a) for a in args]
        overload_ids = self.overloads(e)
        if not overload_ids:
            return ZERO
        total = ZERO
        target: _Node | None = None
        if call.HasField("target"):
            total = total.add(self.cost(call.target))
            target = self.node(call.target)
        fn = Est(U64, 0)
        result: Est | None = None
        for oid in overload_ids:
            est, size = self.function_cost(e, call.function, oid, target, arg_nodes, arg_costs)
            fn = fn.union(est)
            if size is not None:
                result = size if result is None else result.union(size)
            if oid in ("index_list", "index_map") and args:
                entry = self.entry_of(args[0])
                result = entry[2] if entry is not None else None
                self.paths[e.id] = self.path_of(args[0]) + (
                    "@items" if oid == "index_list" else "@values",)
            if result is None:
                result = self.size_of(e)
        if result is not None:
            self.sizes[e.id] = result
        return total.add(fn)

    # -- call rules --------------------------------------------------------------------

    def function_cost(self, e: Any, function: str, oid: str, target: _Node | None,
                      args: list[_Node], arg_costs: list[Est]) -> tuple[Est, Est | None]:
        arg_sum = ZERO
        for c in arg_costs:
            arg_sum = arg_sum.add(c)
        ext = self.extension_cost(oid, target, args)
        if ext is not None:
            return ext[0].add(arg_sum), ext[1]
        custom = self.library_cost(function, oid, target, args)
        if custom is not None:
            return custom[0].add(arg_sum), custom[1]
        size = self.node_size
        if oid == "string_format" and target is not None:
            return size(target).factor(STRING_TRAVERSAL).add(arg_sum), None
        if oid == "string_to_bytes" and len(args) == 1:
            s = size(args[0])
            return s.factor(STRING_TRAVERSAL).add(arg_sum), Est(s.lo, _mul(s.hi, 4))
        if oid == "bytes_to_string" and len(args) == 1:
            s = size(args[0])
            return s.factor(STRING_TRAVERSAL).add(arg_sum), Est(s.lo // 4, s.hi)
        if oid in ("strings_quote", "quote_string") and len(args) == 1:
            s = size(args[0])
            return s.factor(STRING_TRAVERSAL).add(arg_sum), Est(s.lo + 2, _add(_mul(s.hi, 2), 2))
        if oid in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return size(args[0]).factor(STRING_TRAVERSAL).add(arg_sum), None
        if oid == "in_list" and len(args) == 2:
            return size(args[1]).factor(1).add(arg_sum), None
        if oid == "matches_string" and target is not None and len(args) == 1:
            str_cost = size(target).add(ONE).factor(STRING_TRAVERSAL)
            regex_cost = size(args[0]).factor(REGEX_LENGTH)
            return str_cost.mul(regex_cost).add(arg_sum), None
        if oid == "contains_string" and target is not None and len(args) == 1:
            str_cost = size(target).factor(STRING_TRAVERSAL)
            sub_cost = size(args[0]).factor(STRING_TRAVERSAL)
            return str_cost.mul(sub_cost).add(arg_sum), None
        if oid in ("logical_or", "logical_and"):
            lhs, rhs = arg_costs[0], arg_costs[1]
            return Est(lhs.lo, lhs.add(rhs).hi), None
        if oid == "conditional":
            result = size(args[1]).union(size(args[2]))
            e1, e2 = self.entry_of(args[1].expr), self.entry_of(args[2].expr)
            if e1 is not None and e2 is not None:
                self.entries[e.id] = (e1[0], e1[1].union(e2[1]), e1[2].union(e2[2]))
            return arg_costs[0].add(arg_costs[1].union(arg_costs[2])), result
        if oid in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            result = size(args[0]).add(size(args[1]))
            e1, e2 = self.entry_of(args[0].expr), self.entry_of(args[1].expr)
            if e1 is not None and e2 is not None:
                self.entries[e.id] = (e1[0], e1[1].union(e2[1]), e1[2].union(e2[2]))
            if oid == "add_list":
                return ONE.add(arg_sum), result
            return result.factor(STRING_TRAVERSAL).add(arg_sum), result
        if oid in _SIZED_COMPARISONS:
            lhs, rhs = size(args[0]), size(args[1])
            smallest = min(lhs.hi, rhs.hi)
            return Est(1 if smallest > 0 else 0, smallest).factor(STRING_TRAVERSAL).add(arg_sum), None
        return ONE.add(arg_sum), None

    def extension_cost(self, oid: str, target: _Node | None,
                       args: list[_Node]) -> tuple[Est, Est | None] | None:
        """cel-go's per-overload estimators of the sets and lists (v3) extensions."""
        size = self.node_size
        if oid in _SETS_FACTORS and len(args) == 2:
            return size(args[0]).mul(size(args[1])).factor(_SETS_FACTORS[oid]).add(ONE), None
        if target is None:
            if oid in ("lists_range", "list_range") and len(args) == 1:
                return _allocating_list_call(1, fixed(_int_literal(args[0].expr, U64)))
            return None
        if oid == "list_slice" and len(args) == 2:
            start = _int_literal(args[0].expr, 0)
            end = _int_literal(args[1].expr, size(target).hi)
            return _allocating_list_call(1, fixed(max(end - start, 0)))
        if oid == "list_reverse" and not args:
            return _allocating_list_call(1, size(target))
        if oid in ("list_flatten", "list_flatten_int") and len(args) <= 1:
            depth = _int_literal(args[0].expr, U64) if args else 1
            return _allocating_list_call(depth, size(target))
        if oid == "list_distinct" and not args:
            sz = size(target)
            return _allocating_list_call(2.0, sz.mul(sz))
        for suffix, node_of in (("_sort", lambda: target), ("_sortByAssociatedKeys",
                                                             lambda: args[0] if args else None)):
            if oid.startswith("list_") and oid.endswith(suffix):
                elem = oid[5:-len(suffix)]
                if elem not in _SORTABLE or (suffix == "_sort") == bool(args):
                    return None
                node = node_of()
                if node is None:
                    return None
                sz = size(node)
                factor = 2.0 + (STRING_TRAVERSAL if elem in ("string", "bytes") else 0)
                return _allocating_list_call(factor, sz.mul(sz))
        return None

    def library_cost(self, function: str, oid: str, target: _Node | None,
                     args: list[_Node]) -> tuple[Est, Est | None] | None:
        """Kubernetes (apiserver library) and DRA call rules; None = use cel-go's.

        Mirrors upstream's ``CostEstimator.EstimateCallCost`` (k8s.io/apiserver/pkg/cel/library/cost.go),
        one branch per library function, hence its length."""
        size = self.node_size
        if function == "includes" and oid == "dra_includes_dyn_dyn" and target is not None:
            return Est(0, MAX_ATTR_VALUES).mul(ONE), None
        if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
            if target is None:
                return None
            elem = _list_elem(target.type)
            if elem is not None:
                el_cost = ONE
                if kind(elem) in ("string", "bytes"):
                    elem_size = UNKNOWN
                    if target.path:
                        elem_size = device_size(target.path + ("@items",)) or UNKNOWN
                    el_cost = el_cost.add(elem_size.factor(STRING_TRAVERSAL))
                return size(target).mul(el_cost), None
            return size(target).factor(STRING_TRAVERSAL), None
        if function in ("url", "jsonpatch.escapeKey") and len(args) == 1:
            s = size(args[0])
            return s.factor(STRING_TRAVERSAL), s
        if function in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver",
                        "isSemver") and args:
            return size(args[0]).factor(STRING_TRAVERSAL), None
        if function == "ip":
            if oid == "cidr_ip":
                return ONE, None
            if args:
                return size(args[0]).factor(STRING_TRAVERSAL), None
        if function == "ip.isCanonical" and args:
            return size(args[0]).factor(2 * STRING_TRAVERSAL), None
        if function in ("masked", "prefixLength", "family", "isUnspecified", "isLoopback",
                        "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast",
                        "format.named", "major", "minor", "patch", "getScheme", "getHostname",
                        "getHost", "getPort", "getEscapedPath", "getQuery"):
            return ONE, None
        if function in ("containsIP", "containsCIDR") and args:
            ip_bytes = Est(4, 16)
            est = ip_bytes.add(ip_bytes).factor(STRING_TRAVERSAL)
            if function == "containsCIDR":
                est = est.add(ip_bytes.factor(STRING_TRAVERSAL)).add(ONE)
            if oid in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
                est = est.add(size(args[0]).factor(STRING_TRAVERSAL))
            return est, None
        if function == "validate" and args:
            return size(args[0]).factor(STRING_TRAVERSAL).factor(
                MAX_NAME_FORMAT_REGEX_SIZE * REGEX_LENGTH), None
        if function == "_==_" and len(args) == 2:
            return self._opaque_equality_cost(args[0], args[1])
        if function in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            s = size(target)
            return s.factor(STRING_TRAVERSAL), s
        if function == "replace" and target is not None and len(args) >= 2:
            return self._replace_cost(size(target), size(args[0]), size(args[1]))
        if function == "split" and target is not None:
            s = size(target)
            hi = s.hi
            if len(args) > 1 and args[1].expr.WhichOneof("expr_kind") == "const_expr":
                const = args[1].expr.const_expr
                value = getattr(const, const.WhichOneof("constant_kind"))
                if isinstance(value, int) and not isinstance(value, bool):
                    hi = value % 2**64
            return s.factor(2 * STRING_TRAVERSAL), Est(0, hi)
        if function == "join" and target is not None:
            list_size = size(target)
            s = ZERO
            elem = _list_elem(target.type)
            if elem is not None:
                elem_size = UNKNOWN
                if target.path:
                    elem_size = device_size(target.path + ("@items",)) or UNKNOWN
                s = list_size.mul(elem_size)
            if args:
                sep = size(args[0])
                seps = Est(max(list_size.lo - 1, 0), max(list_size.hi - 1, 0))
                s = s.add(sep.mul(seps))
            return s.factor(STRING_TRAVERSAL), s
        if function in ("find", "findAll") and target is not None and args:
            s = size(target)
            str_cost = s.add(ONE).factor(STRING_TRAVERSAL)
            regex_cost = size(args[0]).factor(REGEX_LENGTH)
            return str_cost.mul(regex_cost), Est(0, s.hi)
        if function in ("sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan",
                        "isLessThan", "compareTo", "add", "sub"):
            return ONE, None
        return None

    @staticmethod
    def _opaque_equality_cost(lhs: _Node, rhs: _Node) -> tuple[Est, Est | None] | None:
        """apiserver's ``_==_`` rule for its own types (None: cel-go's size-based rule)."""
        name = _message_name(lhs)
        if name is None or name != _message_name(rhs):
            return None
        if name in _UNIT_EQUALITY_TYPES:
            return ONE, None
        if name == FORMAT_TYPE_NAME:
            return Est(1, MAX_FORMAT_SIZE).factor(STRING_TRAVERSAL), None
        if name == URL_TYPE_NAME:
            size = ONE
            if rhs.size is not None:  # upstream takes both sides' size from the right operand
                size = rhs.size
            return Est(1, size.hi).factor(STRING_TRAVERSAL), None
        return None

    @staticmethod
    def _replace_cost(s: Est, old: Est, new: Est) -> tuple[Est, Est | None]:
        """apiserver's estimate for ``replace``."""
        count_hi = retained_hi = count_lo = retained_lo = 0
        if old.lo == 0:
            count_hi = s.hi + 1 if s.hi < U64 else s.hi
            retained_hi = s.hi
        elif new.hi <= old.lo:
            retained_hi = s.hi
        else:
            count_hi = math.ceil(s.hi / old.lo)
        if old.hi == 0:
            count_lo = s.lo + 1 if s.lo < U64 else s.lo
            retained_lo = s.lo
        elif old.hi <= new.lo:
            retained_lo = s.lo
        else:
            count_lo = math.ceil(s.lo / old.hi)
        result = Est(count_lo, count_hi).mul(new).add(Est(retained_lo, retained_hi))
        return s.factor(2 * STRING_TRAVERSAL), result


#: apiserver pkg/cel limits used by its cost rules
MAX_FORMAT_SIZE = 64
MAX_NAME_FORMAT_REGEX_SIZE = 128
FORMAT_TYPE_NAME = "kubernetes.NamedFormat"
URL_TYPE_NAME = "kubernetes.URL"
#: types whose equality upstream prices at 1
_UNIT_EQUALITY_TYPES = frozenset({"kubernetes.Quantity", "kubernetes.Semver", "net.IP", "net.CIDR"})

_SETS_FACTORS = {"list_sets_contains_list": 1.0, "list_sets_intersects_list": 1.0,
                 "list_sets_equivalent_list": 2.0}
_SORTABLE = frozenset({"int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes"})


def _int_literal(e: Any, default: int) -> int:
    """cel-go nodeAsIntValue: a non-negative int literal, else the default."""
    if e.WhichOneof("expr_kind") != "const_expr" or e.const_expr.WhichOneof("constant_kind") \
            != "int64_value":
        return default
    return max(e.const_expr.int64_value, 0)


def _allocating_list_call(factor: float, size: Est) -> tuple[Est, Est | None]:
    """cel-go estimateAllocatingListCall: size x factor + call + list creation."""
    return size.factor(factor).add(ONE).add(fixed(LIST_CREATE)), size


def _message_name(node: _Node) -> str | None:
    """The declared message type of an argument; capacity values are Quantities upstream
    (the check environment types them dyn, so their path tells)."""
    path = node.path or ()
    if len(path) == 4 and path[:2] == ("device", "capacity"):
        return "kubernetes.Quantity"
    if node.type is not None and node.type.WhichOneof("type_kind") == "message_type":
        return node.type.message_type
    return None


_SIZED_COMPARISONS = frozenset({
    "less_string", "greater_string", "less_equals_string", "greater_equals_string",
    "less_bytes", "greater_bytes", "less_equals_bytes", "greater_equals_bytes",
    "equals", "not_equals",
})


def _literal_size(e: Any) -> Est | None:
    """Sizes known from the literal itself (cel-go computeExprSize)."""
    k = e.WhichOneof("expr_kind")
    if k == "const_expr":
        ck = e.const_expr.WhichOneof("constant_kind")
        if ck == "string_value":
            return fixed(len(e.const_expr.string_value))
        if ck == "bytes_value":
            return fixed(len(e.const_expr.bytes_value))
        if ck in ("bool_value", "double_value", "int64_value", "uint64_value", "null_value",
                  "duration_value", "timestamp_value"):
            return ONE
        return None
    if k == "list_expr":
        return fixed(len(e.list_expr.elements))
    if k == "struct_expr" and not e.struct_expr.message_name:
        return fixed(len(e.struct_expr.entries))
    return None


def estimate(checked: Any) -> Est:
    """The [min, max] cost range of a checked expression."""
    return Coster(checked).cost(checked.expr)


def estimate_cost(checked: Any) -> int:
    """Upstream's ``MaxCost`` for a checked expression."""
    return estimate(checked).hi
