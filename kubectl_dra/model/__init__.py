"""Typed, read-only views over resource.k8s.io/v1 API dicts (qualified names, attribute
values, node selectors, devices, slices), shared by allocation and its presenters."""

from .names import qualify, split_qualified
from .attributes import AttrValue, attribute_value, lookup_attribute
from .nodes import node_labels, node_name, node_matches, node_selector_matches
from .devices import Capacity, CounterConsumption, DeviceID, DeviceView, SliceView, device_uid, slice_view

__all__ = [
    "AttrValue", "Capacity", "CounterConsumption", "DeviceID", "DeviceView", "slice_view", "SliceView", "attribute_value", "device_uid", "lookup_attribute",
    "node_labels", "node_matches", "node_name", "node_selector_matches", "qualify", "split_qualified",
]
