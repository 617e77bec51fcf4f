"""The DRA CEL environments (built once, lazily, thread-safe).

Two kinds of environment share the same function library:

* **check** environments declare ``device`` as the typed message
  ``kubernetes.DRADevice`` so that type checking, result types and errors such as
  ``undefined field 'foo'`` match upstream's typed ``device`` object. One exists
  per feature combination (DRAConsumableCapacity adds
  ``allowMultipleAllocations``; DRAListTypeAttributes adds ``includes()``).
* the **runtime** environment declares ``device`` as ``map(string, dyn)``; the
  rewritten expression is loaded there and evaluated against plain dicts.
"""

from __future__ import annotations

import threading
from typing import Any

from cel_expr_python import cel

from kubectl_dra.cel import _types, library_ext
from kubectl_dra.cel.library import function_decls

# cel-go extensions that the Kubernetes StoredExpressions environment enables.
_EXTENSIONS_YAML = """
name: kubernetes.dra
extensions:
  - name: bindings
  - name: optional
  - name: strings
    version: 2
  - name: lists
    version: 2
  - name: sets
  - name: two-var-comprehensions
"""
# The check environment declares these standard functions itself (library_ext.check_decls).
_CHECK_YAML = _EXTENSIONS_YAML + "stdlib:\n  exclude_functions:\n" + "".join(
    f'    - name: "{name}"\n' for name in library_ext.REPLACED_STDLIB) + library_ext.OPTIONAL_RESULT_FUNCTIONS_YAML
# The runtime environment only loads expanded expressions: no macros needed, and
# cel.@mapInsert comes from library_ext (the extension's own one has no implementation).
_RUNTIME_YAML = _EXTENSIONS_YAML.replace("  - name: two-var-comprehensions\n", "")

DEVICE_VAR = "device"
_lock = threading.Lock()
_check_envs: dict[tuple[bool, bool], Any] = {}
_runtime_env: list[Any] = []


def check_env(*, consumable_capacity: bool = True, list_type_attributes: bool = True) -> Any:
    """The type-checking environment for one feature combination."""
    key = (consumable_capacity, list_type_attributes)
    env = _check_envs.get(key)
    if env is None:
        with _lock:
            env = _check_envs.get(key)
            if env is None:
                device_type = _types.DEVICE_TYPE if consumable_capacity else _types.DEVICE_TYPE_NO_MULTI
                env = cel.NewEnv(
                    _types.POOL, config=cel.NewEnvConfigFromYaml(_CHECK_YAML),
                    variables={DEVICE_VAR: cel.Type(device_type)},
                    extensions=[library_ext.check_extension()],
                    functions=function_decls(includes=list_type_attributes, runtime=False)
                    + library_ext.check_decls())
                _check_envs[key] = env
    return env


def runtime_env() -> Any:
    """The evaluation environment (``device`` is a map of plain values)."""
    if not _runtime_env:
        with _lock:
            if not _runtime_env:
                _runtime_env.append(cel.NewEnv(
                    _types.POOL, config=cel.NewEnvConfigFromYaml(_RUNTIME_YAML),
                    variables={DEVICE_VAR: cel.Type.Map(cel.Type.STRING, cel.Type.DYN)},
                    extensions=[library_ext.runtime_extension()],
                    functions=function_decls(includes=False, runtime=True)
                    + library_ext.runtime_decls()))
    return _runtime_env[0]
