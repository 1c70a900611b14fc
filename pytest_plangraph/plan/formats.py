"""The version numbers of the formats plangraph reads and writes, in a module that imports
nothing: the command line prints ``"format": 1`` without loading the plan's models."""

from __future__ import annotations

FORMAT_VERSION = 1
"""Version of the plan file format (``plangraph: 1``) and of JSON output (``"format": 1``)."""
