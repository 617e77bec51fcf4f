"""Every CEL limit of the DRA selector environment, defined once.

The values are upstream's API constants (``k8s.io/api/resource/v1``) and the CEL
runtime limits the scheduler and the apiserver apply; the compiler, the cost
estimator and the rewrites all read them from here.
"""

from __future__ import annotations

#: resourceapi.CELSelectorExpressionMaxCost: estimated (apiserver) and actual (scheduler) cost limit
MAX_COST = 1_000_000
#: resourceapi.CELSelectorExpressionMaxLength, in bytes (apiserver validation only)
MAX_LENGTH = 10 * 1024

#: device size limits that DRA's cost estimator assumes for ``device`` fields
MAX_DRIVER_LENGTH = 63            # DriverNameMaxLength
MAX_DOMAIN_LENGTH = 63            # a qualified name's domain part
MAX_ID_LENGTH = 32                # DeviceMaxIDLength
MAX_ATTRIBUTES_PER_DEVICE = 32    # ResourceSliceMaxAttributesAndCapacitiesPerDevice
MAX_ATTRIBUTE_VALUE_LENGTH = 64   # DeviceAttributeMaxValueLength
MAX_ATTRIBUTE_VALUES = 48         # ResourceSliceMaxAttributeValuesPerDevice

#: ``includes()`` scans at most this many list items (ResourceSliceMaxAttributeValuesPerDevice)
INCLUDES_MAX_ITEMS = MAX_ATTRIBUTE_VALUES

#: cel-cpp's fixed comprehension-iteration budget per evaluation (not configurable from
#: cel-expr-python); the runtime bound used in place of upstream's actual-cost accounting
ENGINE_ITERATION_BUDGET = 10_000

#: the longest string an evaluation may build by ``+`` or ``replace()``. String sizes are part of
#: upstream's actual cost (concatenation costs 0.1 per character of the result, replace 0.2 per
#: character of its input), so a longer string costs more than MAX_COST to make or to read once;
#: building it is refused with upstream's "actual cost limit exceeded" before it takes memory
#: (cel-cpp, which evaluates here, counts no cost of its own)
MAX_STRING_LENGTH = MAX_COST * 10
#: the longest list an evaluation may build by ``+``: lists in selectors come from one device
#: (at most 48 values), and each item crosses into Python here, so the bound is far tighter
#: than a string's while no real selector comes near it
MAX_LIST_LENGTH = 100_000
#: upstream's text when an evaluation passes the actual-cost limit
ACTUAL_COST_EXCEEDED = "operation cancelled: actual cost limit exceeded"

#: bounded memo sizes of the pure caches in this package (expression text -> program, ...)
COMPILE_CACHE_SIZE = 1024
