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

#: bounded memo sizes of the pure caches in this package (expression text -> program, ...)
COMPILE_CACHE_SIZE = 1024
