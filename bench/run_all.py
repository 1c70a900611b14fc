"""Run every ``bench/bench_*.py`` script, then ``bench/reliability.py``, in turn with small
sizes (``make bench``).

Each script runs in its own process with ``--quick``; a script that predates that flag gets the
small sizes listed in ``SMALL`` instead. Output goes straight through; a summary at the end says
how long each script took and which ones failed (exit 1 if any did). The figures of the small
runs show the ratios quickly; the full-size figures, and how to get them, are in
``docs/performance.md``.

Run: ``.venv/bin/python bench/run_all.py``
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SMALL = {
    "bench_status.py": ["--sizes", "200,500", "--rounds", "1"],
    "bench_plugin.py": ["--rounds", "1"],
    "bench_coverage.py": ["--rounds", "1"],
    "bench_imports.py": ["--count", "20000"],
}


def arguments(script: Path) -> list[str]:
    """``--quick`` when the script knows it, else its entry in ``SMALL`` (else nothing)."""
    if script.name in SMALL and "--quick" not in script.read_text(encoding="utf-8"):
        return SMALL[script.name]
    return ["--quick"]


def main() -> int:
    """Run the scripts one after the other; return 1 when any of them failed."""
    results: list[tuple[str, float, int]] = []
    for script in [*sorted(HERE.glob("bench_*.py")), HERE / "reliability.py"]:
        command = [sys.executable, str(script), *arguments(script)]
        print(f"== {script.name} {' '.join(command[2:])}", flush=True)
        start = time.perf_counter()
        code = subprocess.run(command, cwd=HERE.parent).returncode
        results.append((script.name, time.perf_counter() - start, code))
        print(flush=True)
    print("== summary")
    for name, seconds, code in results:
        print(f"{name:<24} {seconds:6.1f}s  {'ok' if code == 0 else f'FAILED (exit {code})'}")
    return 1 if any(code for _, _, code in results) else 0


if __name__ == "__main__":
    sys.exit(main())
