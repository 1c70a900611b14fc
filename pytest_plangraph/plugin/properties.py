"""The names of the user properties the plugin puts on test reports: a criterion's verdict, the
run it belongs to, and an artifact a test declared it produced (through the fixture)."""

from __future__ import annotations

__all__ = ["ARTIFACT_PROPERTY", "CRITERION_PROPERTY", "RUN_PROPERTY"]

ARTIFACT_PROPERTY = "plangraph_artifact"
CRITERION_PROPERTY = "plangraph_criterion"
RUN_PROPERTY = "plangraph_run"
