"""Compile, check and evaluate DRA CEL expressions (the package's front door)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import any_pb2

from kubectl_dra.cel import environment, limits, messages
from kubectl_dra.cel._proto import checked_pb2
from kubectl_dra.cel.device import DeviceInput
from kubectl_dra.cel.format_check import check_format_calls
from kubectl_dra.cel.library import regex_error_text
from kubectl_dra.cel.respell import respell_exists_one
from kubectl_dra.cel.rewrite import rewrite
from kubectl_dra.errors import CELCompileError, CELRuntimeError
from kubectl_dra.lru import LruMemo

MAX_COST = limits.MAX_COST
MAX_LENGTH = limits.MAX_LENGTH
_RESULT_KINDS = ("bool", "any")


@dataclass(frozen=True)
class CheckResult:
    """What apiserver validation concludes about one expression.

    ``errors`` hold upstream's ``Detail`` texts (compile errors already start with
    ``compilation failed: ``; a wrong result type reads ``must evaluate to bool or
    the unknown type, not int``). ``reason`` is the field-error type to report:
    ``"TooLong"``, ``"Invalid"``, ``"Forbidden"`` (cost) or None when valid.
    """

    errors: list[str] = field(default_factory=list)
    cost: int | None = None
    reason: str | None = None
    #: result type as cel-go prints it (``bool``, ``dyn``, ``list(string)``); None on errors
    output_type: str | None = None

    @property
    def ok(self) -> bool:
        """True when the expression passes validation."""
        return self.reason is None


def _unpack_checked(expr: Any) -> Any:
    """The CheckedExpr behind an engine Expression."""
    wrapper = any_pb2.Any()
    wrapper.ParseFromString(expr.serialize())
    checked = checked_pb2.CheckedExpr()
    wrapper.Unpack(checked)
    return checked


def _python_value(value: Any) -> Any:
    """Engine value → Python (Quantity/Version for the Kubernetes types)."""
    from kubectl_dra.cel import _types
    from kubectl_dra.cel.library import quantity_from_msg, semver_version

    if isinstance(value, list):
        return [_python_value(v) for v in value]
    if isinstance(value, dict):
        return {_python_value(k): _python_value(v) for k, v in value.items()}
    descriptor = getattr(value, "DESCRIPTOR", None)
    if descriptor is not None:
        if descriptor.full_name == _types.QUANTITY_TYPE:
            return quantity_from_msg(value)
        if descriptor.full_name == _types.SEMVER_TYPE:
            return semver_version(value)
    return value


class CompiledExpression:
    """A checked, rewritten expression ready to evaluate against devices."""

    __slots__ = ("expression", "result", "output_type", "optional", "_checked", "_program",
                 "_cost", "_cost_lock")

    def __init__(self, expression: str, result: str, checked: Any, program: Any,
                 output_type: str) -> None:
        self.expression = expression
        self.result = result
        #: result type as cel-go prints it (``bool``, ``dyn``, ``list(string)``, ...)
        self.output_type = output_type
        #: the result is an optional: evaluate() gives its value or None
        self.optional = output_type.startswith("optional_type(")
        self._checked = checked
        self._program = program
        self._cost: int | None = None
        self._cost_lock = threading.Lock()

    @property
    def cost(self) -> int:
        """Estimated worst-case cost (upstream's ``MaxCost``), computed on first use."""
        if self._cost is None:
            from kubectl_dra.cel.cost import estimate_cost

            with self._cost_lock:
                if self._cost is None:
                    self._cost = estimate_cost(self._checked)
        return self._cost

    def _eval(self, device: DeviceInput) -> Any:
        """Evaluate; returns the engine Value or raises CELRuntimeError."""
        if device.error is not None:
            raise CELRuntimeError(device.error)
        try:
            return self._program.eval(device.activation())
        except RuntimeError as err:  # e.g. cel-cpp's iteration budget
            raise self._runtime_error(str(err)) from None

    def _runtime_error(self, raw: Any) -> CELRuntimeError:
        """The CELRuntimeError for an engine error text.

        Runtime cost: cel-cpp cannot count upstream's actual cost; its only bound is a
        fixed budget of 10,000 comprehension iterations per evaluation (cel-expr-python
        cannot change it). An expression whose estimated cost is within the limit can
        never exceed upstream's actual-cost limit, so tripping the budget then is the
        engine's limit, not upstream's, and the error says so instead of claiming
        upstream's "actual cost limit exceeded".
        """
        text = str(raw)
        if "Iteration budget exceeded" in text and self.cost <= MAX_COST:
            return CELRuntimeError(
                f"evaluation stopped by the CEL engine's budget of {limits.ENGINE_ITERATION_BUDGET:,} "
                "comprehension iterations; Kubernetes (estimated cost "
                f"{self.cost:,} <= {MAX_COST:,}) would evaluate this expression")
        return CELRuntimeError(messages.runtime_error_text(text))

    def matches(self, device: DeviceInput) -> bool:
        """Evaluate as a selector: True/False, or CELRuntimeError (upstream text)."""
        value = self._eval(device)
        try:
            raw = value.value()
        except TypeError:  # a value the binding cannot show: an optional
            raw, type_name = None, "optional_type"
        else:
            if raw is True or raw is False:
                return raw
            type_name = value.type().name()
            if type_name == "ERROR":
                raise self._runtime_error(raw)
        go_type = messages.value_type_text(type_name)
        raise CELRuntimeError(
            f"CEL result of type {go_type} could not be converted to bool: "
            f"type conversion error from '{go_type}' to 'bool'")

    def evaluate(self, device: DeviceInput) -> Any:
        """Evaluate and return the result as Python data; CELRuntimeError on error."""
        value = self._eval(device)
        try:
            if value.type().name() == "ERROR":
                raise self._runtime_error(value.value())
            plain = value.plain_value()
        except TypeError:  # the binding cannot convert optional values
            raise CELRuntimeError(
                "CEL result of type optional_type cannot be represented; use .orValue() or "
                ".hasValue()") from None
        if self.optional:
            return _python_value(plain[0]) if plain else None
        return _python_value(plain)

    def __repr__(self) -> str:
        return f"CompiledExpression({self.expression!r})"


def _walk(expr: Any) -> Any:
    """Yield every node of an expression tree."""
    from kubectl_dra.cel.rewrite import _walk as walk

    return walk(expr)


def _located_error(checked: Any, expression: str, node_id: int, message: str) -> str:
    """``ERROR: <input>:L:C: message`` plus cel-go's source snippet for a node."""
    offset = checked.source_info.positions.get(node_id, 0)
    line_no, line_start = 1, 0
    for start in checked.source_info.line_offsets:
        if start <= offset and start > line_start and start < len(expression) + 1:
            line_no += 1
            line_start = start
    line = expression[line_start:].split("\n", 1)[0]
    col = offset - line_start + 1
    return f"ERROR: <input>:{line_no}:{col}: {message}\n | {line}\n | {'.' * (col - 1)}^"


#: calls whose literal arguments cel-go exempts from the homogeneity check (strings ext, bindings)
_HOMOGENEITY_EXEMPT = frozenset({"format", "cel.@block"})


def _walk_outside_calls(expr: Any, exempt: frozenset[str]) -> Any:
    """Every node of a tree except those below a call of an ``exempt`` function."""
    yield expr
    kind = expr.WhichOneof("expr_kind")
    if kind == "call_expr":
        if expr.call_expr.function in exempt:
            return
        if expr.call_expr.HasField("target"):
            yield from _walk_outside_calls(expr.call_expr.target, exempt)
        for arg in expr.call_expr.args:
            yield from _walk_outside_calls(arg, exempt)
    elif kind == "select_expr":
        yield from _walk_outside_calls(expr.select_expr.operand, exempt)
    elif kind == "list_expr":
        for el in expr.list_expr.elements:
            yield from _walk_outside_calls(el, exempt)
    elif kind == "struct_expr":
        for entry in expr.struct_expr.entries:
            if entry.HasField("map_key"):
                yield from _walk_outside_calls(entry.map_key, exempt)
            yield from _walk_outside_calls(entry.value, exempt)
    elif kind == "comprehension_expr":
        c = expr.comprehension_expr
        for part in (c.iter_range, c.accu_init, c.loop_condition, c.loop_step, c.result):
            yield from _walk_outside_calls(part, exempt)


def _homogeneous_literals(checked: Any, expression: str) -> None:
    """Reject mixed-type list/map literals (cel-go HomogeneousAggregateLiterals)."""
    def mismatch(nodes: list[Any]) -> None:
        first: str | None = None
        for node in nodes:
            t = checked.type_map.get(node.id)
            text = messages.type_text(t) if t is not None else "dyn"
            if text == "dyn":
                continue
            if first is None:
                first = text
            elif text != first:
                raise CELCompileError("compilation failed: " + _located_error(
                    checked, expression, node.id, f"expected type '{first}' but found '{text}'"))

    for node in _walk_outside_calls(checked.expr, _HOMOGENEITY_EXEMPT):
        kind = node.WhichOneof("expr_kind")
        if kind == "list_expr":
            optional = set(node.list_expr.optional_indices)
            mismatch([el for i, el in enumerate(node.list_expr.elements) if i not in optional])
        elif kind == "struct_expr" and not node.struct_expr.message_name:
            mismatch([entry.map_key for entry in node.struct_expr.entries])
            mismatch([entry.value for entry in node.struct_expr.entries
                      if not entry.optional_entry])


def _is_device_attributes(node: Any) -> bool:
    """``device.attributes``."""
    return (node.WhichOneof("expr_kind") == "select_expr" and not node.select_expr.test_only
            and node.select_expr.field == "attributes"
            and node.select_expr.operand.WhichOneof("expr_kind") == "ident_expr"
            and node.select_expr.operand.ident_expr.name == "device")


def _lookup_operand(node: Any) -> Any:
    """The map a select or ``_[_]`` lookup reads from (None for other nodes)."""
    kind = node.WhichOneof("expr_kind")
    if kind == "select_expr" and not node.select_expr.test_only:
        return node.select_expr.operand
    if kind == "call_expr" and node.call_expr.function == "_[_]" and len(node.call_expr.args) == 2:
        return node.call_expr.args[0]
    return None


def _is_attribute_value(node: Any) -> bool:
    """``device.attributes[domain][id]`` in any select/index spelling."""
    domain_map = _lookup_operand(node)
    if domain_map is None:
        return False
    attributes = _lookup_operand(domain_map)
    return attributes is not None and _is_device_attributes(attributes)


def _scalar_attribute_ranges(checked: Any, expression: str) -> None:
    """Without DRAListTypeAttributes an attribute is typed ``any``, which cannot be the
    range of a comprehension (upstream's NewExpressions environment)."""
    for node in _walk(checked.expr):
        if node.WhichOneof("expr_kind") == "comprehension_expr" \
                and _is_attribute_value(node.comprehension_expr.iter_range):
            raise CELCompileError("compilation failed: " + _located_error(
                checked, expression, node.comprehension_expr.iter_range.id,
                "expression of type 'google.protobuf.Any' cannot be range of a comprehension "
                "(must be list, map, or dynamic)"))


def _literal_arg(node: Any) -> Any:
    """The Python value of a literal node, or None."""
    if node.WhichOneof("expr_kind") != "const_expr":
        return None
    kind = node.const_expr.WhichOneof("constant_kind")
    return getattr(node.const_expr, kind) if kind else None


def _literal_is_valid(function: str, value: Any) -> bool:
    """Whether ``duration(lit)`` / ``timestamp(lit)`` evaluates (cel-go's literal validators)."""
    text = json.dumps(value) if isinstance(value, str) else str(value)
    env = environment.runtime_env()
    try:
        result = env.compile(f"{function}({text})").eval(env.Activation(data={}))
    except RuntimeError:
        return False
    return result.type().name() != "ERROR"


#: functions whose constant arguments are checked at compile time
_LITERAL_CHECKED = ("matches", "duration", "timestamp", "find")


def _literal_checks(checked: Any, expression: str) -> None:
    """Upstream's checks of constant arguments: regex, duration and timestamp literals
    (cel-go AST validators) and constant find/findAll patterns (program creation)."""
    for node in _walk(checked.expr):
        if node.WhichOneof("expr_kind") != "call_expr" or not node.call_expr.args:
            continue
        function, first = node.call_expr.function, node.call_expr.args[0]
        value = _literal_arg(first)
        if value is None:
            continue
        if function == "matches" and isinstance(value, str) and regex_error_text(value):
            bad = "invalid matches argument"
        elif function in ("duration", "timestamp") and not _literal_is_valid(function, value):
            bad = f"invalid {function} argument"
        elif function in ("find", "findAll") and node.call_expr.HasField("target") \
                and isinstance(value, str) and (why := regex_error_text(value)):
            raise CELCompileError("program instantiation failed: " + why)
        else:
            continue
        raise CELCompileError("compilation failed: " + _located_error(checked, expression,
                                                                      first.id, bad))


#: checked type kinds that agree with any type (an unbound parameter is still free)
_WILDCARD_KINDS = frozenset({"dyn", "error", "type_param", None})


def _assignable(a: Any, b: Any) -> bool:
    """cel-go's type agreement of two checked types (dyn agrees with anything)."""
    ka, kb = a.WhichOneof("type_kind"), b.WhichOneof("type_kind")
    if ka in _WILDCARD_KINDS or kb in _WILDCARD_KINDS:
        return True
    if ka == "null" or kb == "null":  # null agrees with the nullable kinds
        other_kind = kb if ka == "null" else ka
        return other_kind in ("null", "message_type", "well_known", "wrapper", "abstract_type")
    if ka != kb:
        return False
    if ka == "list_type":
        return _assignable(a.list_type.elem_type, b.list_type.elem_type)
    if ka == "map_type":
        return (_assignable(a.map_type.key_type, b.map_type.key_type)
                and _assignable(a.map_type.value_type, b.map_type.value_type))
    return bool(a == b)


def _holds_engine_only_values(t: Any) -> bool:
    """Whether values of this type contain optionals or types, which cel-expr-python cannot
    convert to Python (a list of them crashes the binding)."""
    kind = t.WhichOneof("type_kind")
    if kind == "type" or (kind == "abstract_type" and t.abstract_type.name == "optional_type"):
        return True
    if kind == "list_type":
        return _holds_engine_only_values(t.list_type.elem_type)
    if kind == "map_type":
        return (_holds_engine_only_values(t.map_type.key_type)
                or _holds_engine_only_values(t.map_type.value_type))
    return False


def _may_hold_dyn(t: Any) -> bool:
    """Whether values of this type may be anything (dyn), at the top or inside a list or map."""
    kind = t.WhichOneof("type_kind")
    if kind == "dyn":
        return True
    if kind == "list_type":
        return _may_hold_dyn(t.list_type.elem_type)
    if kind == "map_type":
        return _may_hold_dyn(t.map_type.key_type) or _may_hold_dyn(t.map_type.value_type)
    return False


def _list_index_arguments(checked: Any, expression: str) -> None:
    """``list(A).indexOf(A)``: cel-cpp lets a type parameter widen to dyn, cel-go does not
    (``[1].indexOf('a')`` is a compile error upstream)."""
    uses_optionals = any(token in expression for token in ("optional.", ".?", "[?"))
    for node in _walk(checked.expr):
        if node.WhichOneof("expr_kind") != "call_expr":
            continue
        call = node.call_expr
        if call.function not in ("indexOf", "lastIndexOf") or not call.HasField("target") \
                or len(call.args) != 1:
            continue
        target = checked.type_map.get(call.target.id)
        arg = checked.type_map.get(call.args[0].id)
        if target is None or arg is None:
            continue
        if uses_optionals and (_may_hold_dyn(target) or _may_hold_dyn(arg)):
            # through dyn(), optionals the checker cannot see reach the list library and
            # crash the engine's binding: refuse what may carry them
            raise CELCompileError("compilation failed: " + _located_error(
                checked, expression, node.id,
                f"{call.function}() on values of type dyn in an expression that builds optional values "
                "is not supported: the CEL engine cannot hand optional values to the list library"))
        if target.WhichOneof("type_kind") != "list_type":
            continue
        if _holds_engine_only_values(target.list_type.elem_type):
            raise CELCompileError("compilation failed: " + _located_error(
                checked, expression, node.id,
                f"{call.function}() on a list of {messages.type_text(target.list_type.elem_type)} "
                "is not supported: the CEL engine cannot hand optional or type values to "
                "the list library"))
        if not _assignable(target.list_type.elem_type, arg):
            signature = f"{messages.type_text(target)}.({messages.type_text(arg)})"
            raise CELCompileError("compilation failed: " + _located_error(
                checked, expression, node.id,
                f"found no matching overload for '{call.function}' applied to '{signature}'"))


def _check(expression: str, result: str, consumable_capacity: bool,
           list_type_attributes: bool) -> tuple[Any, str]:
    """Type-check in the feature-specific env; returns (CheckedExpr, output type)."""
    if result not in _RESULT_KINDS:
        raise ValueError(f"result must be one of {_RESULT_KINDS}, not {result!r}")
    env = environment.check_env(consumable_capacity=consumable_capacity,
                                list_type_attributes=list_type_attributes)
    try:
        checked = _unpack_checked(env.compile(expression))
    except RuntimeError:
        respelled = respell_exists_one(expression) if "exists_one" in expression else expression
        try:
            if respelled == expression:
                raise
            checked = _unpack_checked(env.compile(respelled))
        except RuntimeError as final:
            # the respelled text keeps every position; its errors quote the original lines
            text = messages.member_overload_text(messages.compile_error_text(str(final)),
                                                 expression)
            for new_line, old_line in zip(respelled.split("\n"), expression.split("\n")):
                if new_line != old_line:
                    text = text.replace(new_line, old_line)
            raise CELCompileError("compilation failed: " + text) from None
    # each check walks the tree only when the text can contain what it looks for
    if "[" in expression or "{" in expression:
        _homogeneous_literals(checked, expression)
    if any(name in expression for name in _LITERAL_CHECKED):
        _literal_checks(checked, expression)
    if "ndexOf(" in expression:
        _list_index_arguments(checked, expression)
    if ".format(" in expression:
        check_format_calls(checked, _walk(checked.expr),
                           lambda node_id, msg: _located_error(checked, expression, node_id, msg))
    if not list_type_attributes:
        _scalar_attribute_ranges(checked, expression)
    root_type = checked.type_map.get(checked.expr.id)
    output_type = messages.type_text(root_type) if root_type is not None else "dyn"
    if result == "bool" and output_type not in ("bool", "dyn"):
        raise CELCompileError(f"must evaluate to bool or the unknown type, not {output_type}")
    return checked, output_type


def _build(expression: str, result: str) -> CompiledExpression:
    """Check (all features, as the scheduler's StoredExpressions env), rewrite, load."""
    checked, output_type = _check(expression, result, True, True)
    parsed = rewrite(checked, optional_result=output_type.startswith("optional_type("))
    wrapper = any_pb2.Any()
    wrapper.Pack(parsed)
    try:
        program = environment.runtime_env().deserialize(wrapper.SerializeToString())
    except RuntimeError as err:  # a rewrite produced something the engine rejects
        raise CELCompileError(
            "compilation failed: internal rewrite error: " + messages.compile_error_text(str(err))
        ) from None
    return CompiledExpression(expression, result, checked, program, output_type)


#: expression text -> compiled program or its compile error: the package's one compile cache
_compiled = LruMemo(limits.COMPILE_CACHE_SIZE)
#: expression text and environment -> validation outcome
_checked = LruMemo(limits.COMPILE_CACHE_SIZE)


def compile_expression(expression: str, *, result: str = "bool") -> CompiledExpression:
    """Compile an expression for evaluation; raises CELCompileError.

    Memoised in a bounded LRU keyed by the text: both outcomes are pure functions of
    it, so a compile error is remembered too and raised again (a fresh exception each
    call), exactly as compiling again would.
    """
    key = (expression, result)
    hit = _compiled.get(key)
    if hit is None:
        try:
            hit = _build(expression, result)
        except CELCompileError as err:
            hit = err
        _compiled.put(key, hit)
    if isinstance(hit, CELCompileError):
        raise CELCompileError(hit.message) from None
    return hit


def check_expression(expression: str, *, result: str = "bool", stored: bool = False,
                     consumable_capacity: bool = True,
                     list_type_attributes: bool = True) -> CheckResult:
    """Validate an expression as the apiserver does: length, compile, estimated cost.

    ``stored=True`` selects upstream's StoredExpressions env (every feature on);
    otherwise the feature flags pick the NewExpressions declarations. The outcome
    depends only on the arguments, so it is memoised in a bounded LRU (admission
    sees the same selectors again and again); each call gets its own copy.
    """
    if len(expression.encode("utf-8")) > MAX_LENGTH:
        return CheckResult([f"must have at most {MAX_LENGTH} bytes"], None, "TooLong")
    if stored:
        consumable_capacity = list_type_attributes = True
    key = (expression, result, bool(consumable_capacity), bool(list_type_attributes))
    hit = _checked.get(key)
    if hit is None:
        hit = _check_uncached(expression, result, consumable_capacity, list_type_attributes)
        _checked.put(key, hit)
    return CheckResult(list(hit.errors), hit.cost, hit.reason, hit.output_type)


def _check_uncached(expression: str, result: str, consumable_capacity: bool,
                    list_type_attributes: bool) -> CheckResult:
    """:func:`check_expression` without the length check and the cache."""
    try:
        checked, output_type = _check(expression, result, consumable_capacity,
                                      list_type_attributes)
    except CELCompileError as err:
        return CheckResult([err.message], None, "Invalid")
    from kubectl_dra.cel.cost import estimate_cost

    cost = estimate_cost(checked)
    if cost > MAX_COST:
        return CheckResult(["too complex, exceeds cost limit"], cost, "Forbidden", output_type)
    return CheckResult([], cost, None, output_type)
