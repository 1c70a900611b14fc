"""pytest-plangraph: decide from evidence, never from anyone's word, which plan steps are done.

This module stays light on purpose: every pytest run imports the plugin module, and with it this
package. The Python API (:class:`PlanGraph`) is imported on first use.
"""

from __future__ import annotations

from ._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .api import PlanGraph

__all__ = ["PlanGraph", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "PlanGraph":
        from .api import PlanGraph

        return PlanGraph
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
