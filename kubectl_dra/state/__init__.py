"""Cluster state: one snapshot of the objects DRA decisions depend on, and its sources
(files and dumps in :mod:`.files`, a live cluster in :mod:`.live`)."""

from .snapshot import ClusterState, KINDS
from .files import load_documents, load_state

__all__ = ["ClusterState", "KINDS", "load_documents", "load_state"]
