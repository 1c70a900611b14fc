"""The README's demo: a throwaway copy of the JWT-login sample, verified from evidence.

Run it with ``make demo``. Every step runs the real ``plangraph`` and ``pytest`` commands of the
virtual environment in a fresh git repository under a temporary directory, and prints what a user
would see.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures"
BIN = Path(sys.executable).parent
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Demo",
    "GIT_AUTHOR_EMAIL": "demo@example.invalid",
    "GIT_COMMITTER_NAME": "Demo",
    "GIT_COMMITTER_EMAIL": "demo@example.invalid",
}


def step(title: str) -> None:
    print(f"\n\033[1m==> {title}\033[0m", flush=True)


def run(cwd: Path, *argv: str, expect: tuple[int, ...] = (0,)) -> int:
    """Run a command, show it and its output, and check its exit code."""
    print(f"$ {' '.join(argv)}", flush=True)
    env = {**os.environ, **GIT_ENV, "PLANGRAPH_ACTOR": "demo"}
    command = [str(BIN / argv[0]), *argv[1:]] if (BIN / argv[0]).exists() else list(argv)
    code = subprocess.run(command, cwd=cwd, env=env, check=False).returncode
    if code not in expect:
        sys.exit(f"demo: `{' '.join(argv)}` exited {code}, expected {expect}")
    return code


def copy_project(workdir: Path, name: str) -> Path:
    target = workdir / name
    shutil.copytree(FIXTURES / name, target)
    run(target, "git", "init", "-q", "-b", "main")
    run(target, "git", "add", "-A")
    run(target, "git", "commit", "-q", "-m", f"{name}: initial")
    return target


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="plangraph-demo-") as tmp:
        workdir = Path(tmp)
        step("Lint the sample plans (a clean one, and one with a dependency cycle)")
        seed = copy_project(workdir, "seed-000")
        run(seed, "plangraph", "lint")
        run(FIXTURES / "lint", "plangraph", "lint", "cycle.yaml", expect=(1,))

        project = copy_project(workdir, "jwt-login")
        step("JWT login: verify the schema criterion and look at the state table")
        run(project, "plangraph", "verify")
        run(project, "plangraph", "status")

        step("An agent claims the token endpoint is done: refused, no evidence yet")
        run(project, "plangraph", "claim", "step-token-endpoint", "--by", "agent", expect=(1,))

        step("pytest --plangraph turns the test run into evidence")
        run(project, "pytest", "--plangraph")
        step("Claim again: still refused, the security approval is missing")
        run(project, "plangraph", "claim", "step-token-endpoint", "--by", "agent", expect=(1,))
        step("Security approves; now the gate accepts the claim")
        run(
            project,
            "plangraph",
            "approve",
            "step-token-endpoint/ac-security-review",
            "--by",
            "security-lead",
            "--note",
            "token handling reviewed",
        )
        run(project, "plangraph", "claim", "step-token-endpoint", "--by", "agent")
        run(project, "plangraph", "status")

        step("Change the upstream schema and commit: what does it invalidate, and why?")
        schema = project / "src/auth/user_schema.json"
        schema.write_text(schema.read_text().replace('"minLength": 3', '"minLength": 2'))
        run(project, "git", "commit", "-qam", "relax the username rule")
        run(project, "plangraph", "impact", expect=(0,))
        step("The same from the diff alone, as a pull request previews it")
        run(project, "plangraph", "impact", "--since", "HEAD~1", expect=(0,))
        _same_invalidated(project)
        run(project, "plangraph", "status", "--check", expect=(1,))

        step("The gate refuses the stale completion until the affected criteria are verified")
        run(
            project, "pytest", "--plangraph", "--plangraph-gate", "-q", "-k", "success", expect=(1,)
        )
        run(project, "plangraph", "verify")
        run(project, "pytest", "--plangraph", "--plangraph-gate", "-q", expect=(1,))
        step("The approval was bound to the old inputs: security approves again")
        run(
            project,
            "plangraph",
            "approve",
            "step-token-endpoint/ac-security-review",
            "--by",
            "security-lead",
            "--note",
            "re-reviewed after the schema change",
        )
        run(project, "pytest", "--plangraph", "--plangraph-gate", "-q")

        step("Audit: chain intact; then an event edited by hand in the SQLite file is caught")
        run(project, "plangraph", "audit")
        _tamper(project / ".plangraph/store.db")
        run(project, "plangraph", "status", expect=(2,))  # STORE_TAMPERED: no status from it
        run(project, "plangraph", "audit", expect=(1,))
    print("\ndemo finished: every command answered as expected")


def _same_invalidated(project: Path) -> None:
    """Check that the store-based impact and the diff-only preview invalidate the same nodes."""
    found = []
    for extra in ([], ["--since", "HEAD~1"]):
        argv = [str(BIN / "plangraph"), "impact", *extra, "--format", "json"]
        out = subprocess.run(argv, cwd=project, capture_output=True, text=True, check=False)
        found.append(sorted(entry["node"] for entry in json.loads(out.stdout)["invalidated"]))
    if found[0] != found[1] or not found[0]:
        sys.exit(f"demo: impact invalidated {found[0]}, impact --since {found[1]}")
    print(f"(both invalidate the same nodes: {', '.join(found[0])})")


def _tamper(store: Path) -> None:
    """Edit one recorded event behind the store's back, as someone with sqlite3 could."""
    print(
        f"$ sqlite3 {store.name}  # drop the append-only trigger, rewrite who claimed", flush=True
    )
    con = sqlite3.connect(store)
    with con:
        con.execute("DROP TRIGGER events_no_update")
        con.execute("UPDATE events SET by_ = 'somebody-else' WHERE kind = 'claim'")
    con.close()


if __name__ == "__main__":
    main()
