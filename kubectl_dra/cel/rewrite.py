"""AST rewrites that make cel-cpp behave like upstream's DRA CEL runtime.

Input is the type-checked tree of an expression; output is a new parsed tree that
the runtime environment loads. Rewrites:

* ``device.attributes[k]`` / ``device.capacity[k]`` (and ``.k`` selects) become
  ``device.attributes[?k].orValue({})``: an unknown domain is an empty map, as
  with upstream's defaulting map; ``in``, ``size()`` and iteration stay native.
* ``device.attributes[?k]`` / ``.?k`` are likewise never empty.
* ``has(device.attributes.x)`` is always true upstream (the defaulting map's
  ``Find`` always reports found): it becomes ``true``.
* ``x.includes(y)`` becomes native CEL with upstream's semantics (first 48 list
  items, error past that, scalar equality otherwise).
* a comprehension over a ``dyn`` range fails like cel-go
  (``got 'types.Int', expected iterable type``) instead of with cel-cpp's text.
* ``quantity("lit")`` / ``semver("lit"[, b])`` with valid literals are folded
  into message literals, so evaluation does not call into Python.
* ``compareTo`` / ``isGreaterThan`` / ``isLessThan`` on quantities and versions
  compare the messages' int64 fields natively (falling back to the Python
  library only for values those fields cannot hold exactly).
"""

from __future__ import annotations

from typing import Any, Iterator

from kubectl_dra.cel import _types, library_ext, limits
from kubectl_dra.cel.formats import FORMATS
from kubectl_dra.cel._proto import syntax_pb2
from kubectl_dra.cel.library import (
    COMPARE_FUNCTION,
    FAIL_FUNCTION,
    parse_quantity_msg,
    parse_semver_msg,
    time_list_kind,
)

#: cel.expr.Type.WellKnownType TIMESTAMP and DURATION
_WELL_KNOWN_TIMESTAMP, _WELL_KNOWN_DURATION = 2, 3
#: the zero value of a CEL timestamp in cel-go (Go's zero time.Time; cel-cpp uses the epoch)
GO_ZERO_TIME = "0001-01-01T00:00:00Z"

INCLUDES_MAX_ITEMS = limits.INCLUDES_MAX_ITEMS
INCLUDES_TOO_LONG = (
    f"'includes' function cannot be applied to lists longer than {INCLUDES_MAX_ITEMS} values")
_DEFAULTING_FIELDS = ("attributes", "capacity")
#: strings-extension overloads whose index checks are made explicit (overload id -> function)
_STRING_BOUNDED = {
    "string_char_at_int": "charAt",
    "string_index_of_string_int": "indexOf",
    "string_last_index_of_string_int": "lastIndexOf",
    "string_substring_int": "substring",
    "string_substring_int_int": "substring",
}
_COMPARISONS = ("compareTo", "isGreaterThan", "isLessThan")

# cel-go's type names in "got '<type>', expected iterable type"
_ITERABLE_TYPE_NAMES = (
    (("int",), "types.Int"), (("bool",), "types.Bool"), (("string",), "types.String"),
    (("double",), "types.Double"), (("uint",), "types.Uint"), (("bytes",), "types.Bytes"),
    (("null_type",), "types.Null"), (("kubernetes", "Semver"), "cel.Semver"),
    (("kubernetes", "Quantity"), "cel.Quantity"),
)

Expr = syntax_pb2.Expr


def _walk(expr: Any) -> Iterator[Any]:
    """Yield every node of a tree."""
    yield expr
    kind = expr.WhichOneof("expr_kind")
    if kind == "select_expr":
        yield from _walk(expr.select_expr.operand)
    elif kind == "call_expr":
        if expr.call_expr.HasField("target"):
            yield from _walk(expr.call_expr.target)
        for arg in expr.call_expr.args:
            yield from _walk(arg)
    elif kind == "list_expr":
        for el in expr.list_expr.elements:
            yield from _walk(el)
    elif kind == "struct_expr":
        for entry in expr.struct_expr.entries:
            if entry.HasField("map_key"):
                yield from _walk(entry.map_key)
            yield from _walk(entry.value)
    elif kind == "comprehension_expr":
        c = expr.comprehension_expr
        for part in (c.iter_range, c.accu_init, c.loop_condition, c.loop_step, c.result):
            yield from _walk(part)


class Rewriter:
    """Rewrites one checked expression into a runnable parsed expression."""

    def __init__(self, checked: Any, fold_literals: bool = True) -> None:
        self.checked = checked
        self.fold_literals = fold_literals
        self._next_id = max(node.id for node in _walk(checked.expr)) + 1

    # --- node builders ---------------------------------------------------------------

    def _new(self) -> Any:
        """A fresh node with a new id."""
        node = Expr(id=self._next_id)
        self._next_id += 1
        return node

    def ident(self, name: str) -> Any:
        node = self._new()
        node.ident_expr.name = name
        return node

    def const(self, value: Any) -> Any:
        node = self._new()
        if isinstance(value, bool):
            node.const_expr.bool_value = value
        elif isinstance(value, int):
            node.const_expr.int64_value = value
        else:
            node.const_expr.string_value = value
        return node

    def select(self, operand: Any, field: str) -> Any:
        node = self._new()
        node.select_expr.operand.CopyFrom(operand)
        node.select_expr.field = field
        return node

    def call(self, function: str, *args: Any, target: Any = None) -> Any:
        node = self._new()
        node.call_expr.function = function
        if target is not None:
            node.call_expr.target.CopyFrom(target)
        for arg in args:
            node.call_expr.args.add().CopyFrom(arg)
        return node

    def empty_map(self) -> Any:
        node = self._new()
        node.struct_expr.SetInParent()
        return node

    def message(self, type_name: str, **fields: Any) -> Any:
        node = self._new()
        node.struct_expr.message_name = type_name
        for key, value in fields.items():
            entry = node.struct_expr.entries.add(id=self._next_id, field_key=key)
            self._next_id += 1
            entry.value.CopyFrom(self.const(value))
        return node

    def message_literal(self, msg: Any) -> Any:
        """A message-creation node equal to ``msg`` (set fields only)."""
        return self.message(msg.DESCRIPTOR.full_name,
                            **{f.name: value for f, value in msg.ListFields()})

    def bind(self, var: str, init: Any, body: Any) -> Any:
        """cel.bind(var, init, body) in its macro-expanded form."""
        node = self._new()
        c = node.comprehension_expr
        c.iter_var = "#unused"
        c.iter_range.CopyFrom(self._new())
        c.iter_range.list_expr.SetInParent()
        c.accu_var = var
        c.accu_init.CopyFrom(init)
        c.loop_condition.CopyFrom(self.const(False))
        c.loop_step.CopyFrom(self.ident(var))
        c.result.CopyFrom(body)
        return node

    def fold(self, items: Any, init: Any, step: Any, var: str, accu: str) -> Any:
        """A comprehension over ``items`` whose accumulator ``accu`` starts at ``init`` and
        becomes ``step`` (over ``var`` and ``accu``) for every item; its result is ``accu``."""
        node = self._new()
        c = node.comprehension_expr
        c.iter_var = var
        c.iter_range.CopyFrom(items)
        c.accu_var = accu
        c.accu_init.CopyFrom(init)
        c.loop_condition.CopyFrom(self.const(True))
        c.loop_step.CopyFrom(step)
        c.result.CopyFrom(self.ident(accu))
        return node

    def _fold_time_list(self, function: str, target: Any) -> Any:
        """sum()/min()/max() of a list of durations or timestamps as a fold in CEL (exact to
        the nanosecond, as upstream's): sum from a zero duration, min/max keeping the first
        extreme element and failing on an empty list with the list library's error."""
        items, x, acc = (f"@dra_{name}{self._next_id}" for name in ("l", "x", "a"))
        if function == "sum":
            return self.bind(items, target, self.fold(
                self.ident(items), self.call("duration", self.const("0s")),
                self.call("_+_", self.ident(acc), self.ident(x)), x, acc))
        better = "_<_" if function == "min" else "_>_"
        first = self.call("_[_]", self.ident(items), self.const(0))
        pick = self.cond(self.call(better, self.ident(x), self.ident(acc)), self.ident(x), self.ident(acc))
        return self.bind(items, target, self.cond(
            self.call("_==_", self.call("size", self.ident(items)), self.const(0)),
            self.call(FAIL_FUNCTION, self.const(f"{function} called on empty list")),
            self.fold(self.ident(items), first, pick, x, acc)))

    def cond(self, test: Any, yes: Any, no: Any) -> Any:
        return self.call("_?_:_", test, yes, no)

    def type_is(self, var: str, type_path: tuple[str, ...]) -> Any:
        type_expr = self.ident(type_path[0])
        for part in type_path[1:]:
            type_expr = self.select(type_expr, part)
        return self.call("_==_", self.call("type", self.ident(var)), type_expr)

    # --- helpers -----------------------------------------------------------------------

    def _is_type_dyn(self, node: Any) -> bool:
        t = self.checked.type_map.get(node.id)
        return t is not None and t.WhichOneof("type_kind") == "dyn"

    @staticmethod
    def _is_defaulting_map(node: Any) -> bool:
        """True for ``device.attributes`` / ``device.capacity``."""
        return (node.WhichOneof("expr_kind") == "select_expr"
                and not node.select_expr.test_only
                and node.select_expr.field in _DEFAULTING_FIELDS
                and node.select_expr.operand.WhichOneof("expr_kind") == "ident_expr"
                and node.select_expr.operand.ident_expr.name == "device")

    def _default_lookup(self, map_expr: Any, key: Any) -> Any:
        """``map_expr[?key].orValue({})``."""
        return self.call("orValue", self.empty_map(),
                         target=self.call("_[?_]", map_expr, key))

    # --- rewrites ----------------------------------------------------------------------

    def rewrite(self, optional_result: bool = False) -> Any:
        """Return the rewritten ParsedExpr (an optional result as a list of 0 or 1 items)."""
        out = syntax_pb2.ParsedExpr()
        root = self._rw(self.checked.expr)
        if optional_result:
            name = f"@dra_o{self._next_id}"
            some = self._new()
            some.list_expr.elements.add().CopyFrom(self.call("value", target=self.ident(name)))
            none = self._new()
            none.list_expr.SetInParent()
            root = self.bind(name, root, self.cond(self.call("hasValue", target=self.ident(name)),
                                                   some, none))
        out.expr.CopyFrom(root)
        out.source_info.CopyFrom(self.checked.source_info)
        return out

    def _rw(self, node: Any) -> Any:
        kind = node.WhichOneof("expr_kind")
        if kind == "select_expr":
            return self._rw_select(node)
        if kind == "call_expr":
            return self._rw_call(node)
        if kind == "comprehension_expr":
            return self._rw_comprehension(node)
        out = Expr()
        out.CopyFrom(node)
        if kind == "list_expr":
            del out.list_expr.elements[:]
            for el in node.list_expr.elements:
                out.list_expr.elements.add().CopyFrom(self._rw(el))
        elif kind == "struct_expr":
            for i, entry in enumerate(node.struct_expr.entries):
                if entry.HasField("map_key"):
                    out.struct_expr.entries[i].map_key.CopyFrom(self._rw(entry.map_key))
                out.struct_expr.entries[i].value.CopyFrom(self._rw(entry.value))
        return out

    def _rw_select(self, node: Any) -> Any:
        sel = node.select_expr
        if self._is_defaulting_map(sel.operand):
            if sel.test_only:
                out = self.const(True)
                out.id = node.id
                return out
            out = self._default_lookup(self._rw(sel.operand), self.const(sel.field))
            out.id = node.id
            return out
        out = Expr()
        out.CopyFrom(node)
        out.select_expr.operand.CopyFrom(self._rw(sel.operand))
        return out

    def _rw_call(self, node: Any) -> Any:
        call = node.call_expr
        args = [self._rw(a) for a in call.args]
        target = self._rw(call.target) if call.HasField("target") else None
        if call.function == "_[_]" and target is None and self._is_defaulting_map(call.args[0]):
            out = self._default_lookup(args[0], args[1])
        elif (call.function in ("_[?_]", "_?._") and target is None and len(args) == 2
              and self._is_defaulting_map(call.args[0])):
            # the defaulting map always "finds" a domain, so optional access is never empty
            out = self.call("optional.of", self._default_lookup(args[0], args[1]))
        elif call.function == "includes" and target is not None and len(args) == 1:
            out = self._includes(target, args[0])
        elif (call.function in _COMPARISONS and target is not None and len(args) == 1
              and (kind := self._comparison_kind(node)) is not None):
            out = self._native_compare(call.function, kind, target, args[0])
        elif self.fold_literals and target is None and (folded := self._fold(call)) is not None:
            out = folded
        elif (renamed := self._library_call(node, call.function, target, args)) is not None:
            out = renamed
        else:
            out = Expr()
            out.CopyFrom(node)
            del out.call_expr.args[:]
            for a in args:
                out.call_expr.args.add().CopyFrom(a)
            if target is not None:
                out.call_expr.target.CopyFrom(target)
            return out
        out.id = node.id
        return out

    def _fold(self, call: Any) -> Any | None:
        """Fold quantity()/semver() of valid string literals into message literals."""
        consts = []
        for arg in call.args:
            if arg.WhichOneof("expr_kind") != "const_expr":
                return None
            consts.append(getattr(arg.const_expr, arg.const_expr.WhichOneof("constant_kind")))
        try:
            if call.function == "quantity" and len(consts) == 1 and isinstance(consts[0], str):
                return self.message_literal(parse_quantity_msg(consts[0]))
            if (call.function == "semver" and 1 <= len(consts) <= 2 and isinstance(consts[0], str)
                    and (len(consts) == 1 or isinstance(consts[1], bool))):
                return self.message_literal(parse_semver_msg(consts[0], len(consts) == 2 and consts[1]))
        except Exception:  # invalid literal: keep the call, it fails at runtime as upstream
            return None
        return None

    def _overload_ids(self, node: Any) -> list[str]:
        ref = self.checked.reference_map.get(node.id)
        return list(ref.overload_id) if ref is not None else []

    def _fail_with(self, *parts: Any) -> Any:
        """An evaluation error whose text is the concatenation of string nodes."""
        text = parts[0]
        for part in parts[1:]:
            text = self.call("_+_", text, part)
        return self.call(FAIL_FUNCTION, text)

    def _out_of_range(self, var: str) -> Any:
        """cel-go's ``index out of range: N`` for the int variable ``var``."""
        return self._fail_with(self.const("index out of range: "),
                               self.call("string", self.ident(var)))

    def _outside(self, var: str, text: str, allow_end: bool = True) -> Any:
        """``var < 0 || var > size(text)`` (``>=`` when the end is not allowed)."""
        return self.call("_||_", self.call("_<_", self.ident(var), self.const(0)),
                         self.call("_>_" if allow_end else "_>=_", self.ident(var),
                                   self.call("size", self.ident(text))))

    def _string_bounds(self, ids: list[str], target: Any, args: list[Any]) -> Any | None:
        """The strings extension's index checks with cel-go v0.27's results and errors
        (cel-cpp words them differently and errs where cel-go returns -1)."""
        if len(ids) != 1 or ids[0] not in _STRING_BOUNDED:
            return None
        oid, n = ids[0], self._next_id
        s, a, b, c = f"@dra_s{n}", f"@dra_a{n}", f"@dra_b{n}", f"@dra_c{n}"
        native = self.call(_STRING_BOUNDED[oid], *[self.ident(v) for v in (a, b, c)[:len(args)]],
                           target=self.ident(s))
        if oid == "string_char_at_int":
            body = self.cond(self._outside(a, s), self._out_of_range(a), native)
        elif oid in ("string_index_of_string_int", "string_last_index_of_string_int"):
            body = self.cond(
                self.call("_==_", self.ident(a), self.const("")), self.ident(b),
                self.cond(self.call("_<_", self.ident(b), self.const(0)), self._out_of_range(b),
                          self.cond(self.call("_>=_", self.ident(b),
                                              self.call("size", self.ident(s))),
                                    self.const(-1), native)))
        elif oid == "string_substring_int":
            body = self.cond(self._outside(a, s), self._out_of_range(a), native)
        else:
            invalid = self._fail_with(
                self.const("invalid substring range. start: "), self.call("string", self.ident(a)),
                self.const(", end: "), self.call("string", self.ident(b)))
            body = self.cond(self.call("_>_", self.ident(a), self.ident(b)), invalid,
                             self.cond(self._outside(a, s), self._out_of_range(a),
                                       self.cond(self._outside(b, s), self._out_of_range(b),
                                                 native)))
        for var, value in reversed(list(zip((s, a, b, c), [target, *args]))):
            body = self.bind(var, value, body)
        return body

    def _library_call(self, node: Any, function: str, target: Any, args: list[Any]) -> Any | None:
        """Calls the engine cannot dispatch itself, as calls of runtime helpers (or None)."""
        ids = self._overload_ids(node)
        if target is not None and (bounded := self._string_bounds(ids, target, args)) is not None:
            return bounded
        if function == "replace" and target is not None and ids and set(ids) <= library_ext.REPLACE_OVERLOADS:
            return self.call(library_ext.REPLACE_FUNCTION, target, *args)
        if function == "_+_" and target is None and ids and set(ids) <= library_ext.ADD_STRING_OVERLOADS:
            return self.call(library_ext.ADD_STRING_FUNCTION, *args)
        if function == "_+_" and target is None and ids and set(ids) <= library_ext.ADD_LIST_OVERLOADS \
                and len(args) == 2:
            # the length is checked in Python, the lists are joined by the engine
            left, right = f"@dra_ll{self._next_id}", f"@dra_lr{self._next_id}"
            return self.bind(left, args[0], self.bind(right, args[1], self.cond(
                self.call(library_ext.LIST_GROWTH_FUNCTION, self.call(
                    "_+_", self.call("size", self.ident(left)), self.call("size", self.ident(right)))),
                self.call("_+_", self.ident(left), self.ident(right)),
                self.call(FAIL_FUNCTION, self.const(limits.ACTUAL_COST_EXCEEDED)))))
        if function == "optional.ofNonZeroValue" and target is None and len(args) == 1 \
                and self._is_timestamp(node.call_expr.args[0]):
            # cel-go's zero timestamp is Go's zero time, 0001-01-01T00:00:00Z (cel-cpp: the epoch)
            held = f"@dra_t{self._next_id}"
            return self.bind(held, args[0], self.cond(
                self.call("_==_", self.ident(held), self.call("timestamp", self.const(GO_ZERO_TIME))),
                self.call("optional.none"), self.call("optional.of", self.ident(held))))
        if function in ("sum", "min", "max") and target is not None and not args \
                and time_list_kind(function, ids) is not None:
            return self._fold_time_list(function, target)
        if function == "format" and target is not None and ids == ["string_format"]:
            if len(args) == 1:
                self._exact_durations(node.call_expr.args[0], args[0])
            return self.call(library_ext.STRING_FORMAT_FUNCTION, target, *args)
        if function == "string" and ids and set(ids) <= library_ext.OWN_STRING_OVERLOADS:
            return self.call(library_ext.STRING_FUNCTION, *args)
        if function in ("indexOf", "lastIndexOf") and target is not None and any(
                i.startswith(library_ext.OWN_LIST_INDEX_PREFIX) for i in ids):
            helper = (library_ext.INDEX_OF_FUNCTION if function == "indexOf"
                      else library_ext.LAST_INDEX_OF_FUNCTION)
            return self.call(helper, target, *args)
        if function.startswith("format.") and function[7:] in FORMATS and not args and target is None:
            return self.message(_types.FORMAT_TYPE, n=FORMATS[function[7:]][0])
        if function == "format.named" and target is None and len(args) == 1:
            name = f"@dra_n{self._next_id}"
            return self.bind(name, args[0], self.cond(
                self.call(library_ext.FORMAT_KNOWN_FUNCTION, self.ident(name)),
                self.call("optional.of", self.call(library_ext.FORMAT_OF_FUNCTION, self.ident(name))),
                self.call("optional.none")))
        if function == "validate" and target is not None and len(args) == 1 and "format-validate" in ids:
            found = f"@dra_v{self._next_id}"
            return self.bind(found, self.call(library_ext.FORMAT_VALIDATE_FUNCTION, target, args[0]),
                             self.cond(self.call("_==_", self.call("size", self.ident(found)),
                                                 self.const(0)),
                                       self.call("optional.none"),
                                       self.call("optional.of", self.ident(found))))
        return None

    def _exact_durations(self, checked: Any, rewritten: Any) -> None:
        """In a list literal of string.format() arguments (and list literals in it), hand each
        duration over as its exact text (kubernetes.DurationText): the binding would pass it
        as a timedelta, in microseconds, and duration("2ns") would print as 0s."""
        if checked.WhichOneof("expr_kind") != "list_expr" or rewritten.WhichOneof("expr_kind") != "list_expr":
            return
        for original, element in zip(checked.list_expr.elements, rewritten.list_expr.elements):
            if self._is_kind(original, _WELL_KNOWN_DURATION):
                text = self._new()
                text.struct_expr.message_name = _types.DURATION_TEXT_TYPE
                entry = text.struct_expr.entries.add(id=self._next_id, field_key="t")
                self._next_id += 1
                entry.value.CopyFrom(self.call("string", element))
                element.CopyFrom(text)
            else:
                self._exact_durations(original, element)

    def _is_kind(self, node: Any, well_known: int) -> bool:
        """Whether the checker typed ``node`` as that well-known type."""
        t = self.checked.type_map.get(node.id)
        return t is not None and t.WhichOneof("type_kind") == "well_known" and t.well_known == well_known

    def _is_timestamp(self, node: Any) -> bool:
        """Whether the checker typed ``node`` as a timestamp."""
        t = self.checked.type_map.get(node.id)
        return t is not None and t.WhichOneof("type_kind") == "well_known" and t.well_known == _WELL_KNOWN_TIMESTAMP

    def _comparison_kind(self, node: Any) -> str | None:
        """'quantity' / 'semver' when a comparison call resolved to that library."""
        ref = self.checked.reference_map.get(node.id)
        ids = list(ref.overload_id) if ref is not None else []
        if ids and all(i.startswith("quantity_") for i in ids):
            return "quantity"
        if ids and all(i.startswith("semver_") for i in ids):
            return "semver"
        return None

    def _three_way(self, a: str, b: str, fields: tuple[str, ...]) -> Any:
        """Lexicographic -1/0/1 comparison of message fields of two bound variables."""
        out: Any = self.const(0)
        for name in reversed(fields):
            fa, fb = self.select(self.ident(a), name), self.select(self.ident(b), name)
            out = self.cond(self.call("_<_", fa, fb), self.const(-1),
                            self.cond(self.call("_>_", self.select(self.ident(a), name),
                                                self.select(self.ident(b), name)),
                                      self.const(1), out))
        return out

    def _native_compare(self, function: str, kind: str, target: Any, arg: Any) -> Any:
        """compareTo/isGreaterThan/isLessThan on Quantity or Semver without Python calls
        when both values are exactly representable in their int64 fields."""
        a, b = f"@dra_x{self._next_id}", f"@dra_y{self._next_id}"
        fields = ("i", "n") if kind == "quantity" else ("ma", "mi", "pa")
        both_exact = self.call("_&&_", self.select(self.ident(a), "x"),
                               self.select(self.ident(b), "x"))
        cmp = self.cond(both_exact, self._three_way(a, b, fields),
                        self.call(COMPARE_FUNCTION, self.ident(a), self.ident(b)))
        if function == "isGreaterThan":
            cmp = self.call("_==_", cmp, self.const(1))
        elif function == "isLessThan":
            cmp = self.call("_==_", cmp, self.const(-1))
        return self.bind(a, target, self.bind(b, arg, cmp))

    def _includes(self, target: Any, arg: Any) -> Any:
        """Native-CEL form of ``target.includes(arg)``."""
        t, a = f"@dra_t{self._next_id}", f"@dra_a{self._next_id}"
        too_long = self.call("_>_", self.call("size", target=self.ident(t)),
                             self.const(INCLUDES_MAX_ITEMS))
        head = self.cond(too_long, self.call("slice", self.const(0),
                                             self.const(INCLUDES_MAX_ITEMS), target=self.ident(t)),
                         self.ident(t))
        too_long2 = self.call("_>_", self.call("size", target=self.ident(t)),
                              self.const(INCLUDES_MAX_ITEMS))
        in_list = self.cond(
            self.call("@in", self.ident(a), head), self.const(True),
            self.cond(too_long2, self.call(FAIL_FUNCTION, self.const(INCLUDES_TOO_LONG)),
                      self.const(False)))
        body = self.cond(self.type_is(t, ("list",)), in_list,
                         self.call("_==_", self.ident(t), self.ident(a)))
        return self.bind(t, target, self.bind(a, arg, body))

    def _rw_comprehension(self, node: Any) -> Any:
        out = Expr()
        out.CopyFrom(node)
        c, src = out.comprehension_expr, node.comprehension_expr
        c.iter_range.CopyFrom(self._rw(src.iter_range))
        c.accu_init.CopyFrom(self._rw(src.accu_init))
        c.loop_condition.CopyFrom(self._rw(src.loop_condition))
        c.loop_step.CopyFrom(self._rw(src.loop_step))
        c.result.CopyFrom(self._rw(src.result))
        if self._is_type_dyn(src.iter_range):
            c.iter_range.CopyFrom(self._checked_range(c.iter_range))
        return out

    def _checked_range(self, range_expr: Any) -> Any:
        """Wrap a dyn iteration range so non-iterables fail with cel-go's text."""
        r = f"@dra_r{self._next_id}"
        name: Any = self.const("unknown")
        for path, go_name in reversed(_ITERABLE_TYPE_NAMES):
            name = self.cond(self.type_is(r, path), self.const(go_name), name)
        message = self.call("_+_", self.call("_+_", self.const("got '"), name),
                            self.const("', expected iterable type"))
        iterable = self.call("_||_", self.type_is(r, ("list",)), self.type_is(r, ("map",)))
        return self.bind(r, range_expr,
                         self.cond(iterable, self.ident(r), self.call(FAIL_FUNCTION, message)))


def rewrite(checked: Any, fold_literals: bool = True, optional_result: bool = False) -> Any:
    """Rewrite a CheckedExpr into a runnable ParsedExpr."""
    return Rewriter(checked, fold_literals).rewrite(optional_result)


__all__ = ["rewrite", "Rewriter", "INCLUDES_TOO_LONG"]
