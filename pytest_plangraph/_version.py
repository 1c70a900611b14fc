"""The version of pytest-plangraph, alone in a module that imports nothing.

Modules of every layer read it (the cache keys, the run facts of an evidence record); reading it
from the package itself would import the package's ``__init__``, whose lazy public names lead to
the API at the top, so every such module would seem to depend on the whole package.
"""

__version__ = "0.1.0.dev0"
