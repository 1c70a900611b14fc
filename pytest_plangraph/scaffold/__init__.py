"""``plangraph init``: a starter plan from the code and tests a repository already has.

:mod:`.scan` reads the repository (units, test files, imports, with :mod:`ast`);
:mod:`.starter` turns what it found into commented YAML. :func:`write_starter` is the one
function that writes: it refuses to overwrite a file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from ..errors import UsageError
from ..plan.boundary import plan_json_schema
from ..progress import Progress
from ..vcs.roots import find_root
from .scan import scan
from .starter import starter_plan

SCHEMA_FILE = "plangraph.schema.json"


def starter_text(
    root: Path, *, packages: Iterable[str] = (), from_tests: bool = False, schema_ref: str
) -> str:
    """The starter plan of the repository at *root* (see :mod:`.starter`)."""
    with Progress("init") as progress:
        found = scan(root, packages, lambda rel: progress.step(f"reading {rel}"))
    if not found.units:
        where = ", ".join(packages) or "the repository root or src/"
        raise UsageError(
            f"no Python package or module found in {where}; name the source with --package DIR"
        )
    if from_tests and not found.tests:
        raise UsageError(
            "--from-tests: no test file (test_*.py, *_test.py under the configured testpaths) "
            "tests any module found; run without --from-tests to get a step per module"
        )
    return starter_plan(found, root.name, from_tests=from_tests, schema_ref=schema_ref)


def write_starter(output: Path, text: str) -> None:
    """Write *text* to *output*, which must not exist yet (exclusive create: no race either)."""
    try:
        with open(output, "x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        raise UsageError(
            f"{output} exists already; `plangraph init` never overwrites a plan. Move it away, "
            "or write the starter plan elsewhere with --output FILE"
        ) from None
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None


def schema_reference(root: Path, output: Path) -> tuple[str, Path | None]:
    """The ``$schema`` path for the plan's editor comment, relative to the plan, and the file
    to write the schema to (None when the repository already keeps a copy in ``docs/``)."""
    kept = root / "docs" / SCHEMA_FILE
    target = kept if kept.is_file() else root / ".plangraph" / SCHEMA_FILE
    ref = os.path.relpath(target, output.parent).replace(os.sep, "/")
    return ref, None if kept.is_file() else target


def init_plan(
    root: Path | None,
    *,
    output: Path | None = None,
    packages: Iterable[str] = (),
    from_tests: bool = False,
) -> Path:
    """Write the starter plan of the repository at *root* (the nearest above the working
    directory holding ``.git`` when None) to *output* (``plangraph.yaml`` at the root when
    None); return the plan's path. UsageError when the plan exists or no code is found."""
    if root is not None and not Path(root).is_dir():
        raise UsageError(f"the root directory {root} does not exist or is not a directory")
    root = find_root(Path.cwd() if root is None else Path(root))
    output = (root / "plangraph.yaml" if output is None else Path(output)).absolute()
    if output.exists() or output.is_symlink():
        write_starter(output, "")  # refuses, with the message
    if not output.parent.is_dir():
        raise UsageError(f"cannot write {output}: its directory does not exist")
    ref, schema_file = schema_reference(root, output)
    text = starter_text(root, packages=list(packages), from_tests=from_tests, schema_ref=ref)
    write_starter(output, text)
    if schema_file is not None:
        schema_file.parent.mkdir(parents=True, exist_ok=True)
        schema_file.write_text(json.dumps(plan_json_schema(), indent=2) + "\n", encoding="utf-8")
    return output
