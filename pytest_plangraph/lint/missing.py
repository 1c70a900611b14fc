"""Files a criterion names that are not in the repository: ``TESTS_NOT_FOUND`` (a ``tests:``
pattern whose file part matches no file, or a glob of files only, which matches no test id)
and ``ARTIFACT_NOT_FOUND`` (the artifact a schema check validates, or the file an artifact
check hashes, does not exist).

Both are warnings: a step's artifact or its test file may simply not be written yet. But a
typo in a path is found only here — a ``tests:`` pattern that matches nothing fails its
criterion with ``TEST_NOT_FOUND`` only when the suite runs, and ``plangraph impact`` never
reaches the criterion through a file that does not exist. A schema file that does not exist is
a ``VERIFIER_CONFIG`` error already (the check cannot run at all).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import cut, quoted
from ..plan.messages import FieldPath
from ..plan.model import ArtifactVerifier, SchemaVerifier, TestVerifier
from ..plan.paths import is_glob, path_problem
from ..plan.patterns import files_only_glob
from .findings import Finding, LintContext


def missing_files(ctx: LintContext) -> Iterator[Finding]:
    """``TESTS_NOT_FOUND`` and ``ARTIFACT_NOT_FOUND`` for the live nodes' criteria."""
    files = ctx.files
    if files is None or (ctx.wanted is not None and "warning" not in ctx.wanted):
        return  # a command checks errors only: it looks at no file for these
    named: list[tuple[str, str, str, str, str, FieldPath]] = []
    for i, node in enumerate(ctx.loaded.plan.nodes):
        if node.cancelled:
            continue
        for k, criterion in enumerate(node.acceptance):
            verifier = criterion.verifier
            where = ("nodes", i, "acceptance", k, "verifier")
            ref = f"{node.id}/{criterion.id}"
            if isinstance(verifier, TestVerifier):
                for t, pattern in enumerate(verifier.tests):
                    # a glob of files matches no test id (unless a file has its very name)
                    if files_only_glob(pattern) and not files.is_file(pattern):
                        hint = (
                            f"{ref}: tests pattern {quoted(pattern)} is a glob of files, and a "
                            f"glob matches whole test ids (file.py::test): it matches no test; "
                            f"write {quoted(pattern + '::*')}"
                        )
                        yield ctx.finding("TESTS_NOT_FOUND", node.id, hint, (*where, "tests", t))
                    elif file := pattern.split("::", 1)[0]:
                        named.append(
                            ("TESTS_NOT_FOUND", node.id, ref, pattern, file, (*where, "tests", t))
                        )
            elif isinstance(verifier, SchemaVerifier):
                named.append(
                    (
                        "ARTIFACT_NOT_FOUND",
                        node.id,
                        ref,
                        "artifact",
                        verifier.artifact,
                        (*where, "artifact"),
                    )
                )
            elif isinstance(verifier, ArtifactVerifier):
                named.append(
                    ("ARTIFACT_NOT_FOUND", node.id, ref, "path", verifier.path, (*where, "path"))
                )
    paths = [  # else PATH_OUTSIDE_ROOT, or a glob where a check needs one file: VERIFIER_CONFIG
        n[4]
        for n in named
        if path_problem(n[4]) is None and (n[0] == "TESTS_NOT_FOUND" or not is_glob(n[4]))
    ]
    present = files.present(p for p in paths if not files.escapes(p))
    for code, node_id, ref, what, path, field in named:
        if path not in paths or path in present or files.escapes(path):
            continue
        if code == "TESTS_NOT_FOUND":
            hint = (
                f"{ref}: no file in the repository matches {cut(path)}, the file part of tests "
                f"pattern {quoted(what)}: fix the path, or write the test file"
            )
        else:
            hint = (
                f"{ref}: the {what} {cut(path)} does not exist: fine while the step has still to "
                "make it, else fix the path"
            )
        yield ctx.finding(code, node_id, hint, field)
