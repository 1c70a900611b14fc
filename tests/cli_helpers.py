"""Running the real ``plangraph`` command in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PLANGRAPH = Path(sys.executable).parent / "plangraph"


@dataclass
class Result:
    """What a command printed and how it exited."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        """stdout parsed as JSON."""
        return json.loads(self.out)


def plangraph(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    """Run ``plangraph ARGS`` in *cwd*."""
    full_env = {**os.environ, "PLANGRAPH_ACTOR": "tester", **(env or {})}
    full_env.pop("PLANGRAPH_STORE", None) if "PLANGRAPH_STORE" not in (env or {}) else None
    proc = subprocess.run(
        [str(PLANGRAPH), *args], cwd=cwd, env=full_env, capture_output=True, text=True, check=False
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)
