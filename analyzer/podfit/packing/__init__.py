"""Packing analyzer: do the pods fit the nodes (with proof), least nodes, right-sizing.

Pure: plain frozen inputs (:mod:`.model`) in, frozen results out. :mod:`.adapter` builds the inputs
from the facts' workloads and a platform profile; only the CLI does I/O.
"""

from .bounds import certificates, dff_bound, l2_bound, lower_bound, node_bounds
from .engine import (
    DEFAULT_TIME_BUDGET,
    Analysis,
    MinNodesResult,
    analyze,
    headroom,
    min_nodes,
    pack,
    right_size,
    stranded,
)
from .model import *  # noqa: F401,F403
from .model import __all__ as _model_all

__all__ = list(_model_all) + [
    "dff_bound",
    "l2_bound",
    "lower_bound",
    "certificates",
    "node_bounds",
    "DEFAULT_TIME_BUDGET",
    "Analysis",
    "MinNodesResult",
    "analyze",
    "headroom",
    "min_nodes",
    "pack",
    "right_size",
    "stranded",
]
