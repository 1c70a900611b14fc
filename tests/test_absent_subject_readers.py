"""Every reader of evidence subjects takes a subject bound absent (``"absent"``): the kept
status answer misses when a file appears there, ``attest`` and ``export --format in-toto``
leave it out of the statement's subjects (an in-toto subject needs a digest), the reports
print it, ``impact`` names the file that appears and the node it reaches, and a link leading
out of the repository counts as a file appearing.

Real pytest sessions (``pytester``), real git repositories, the real ``plangraph`` command.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path

import pytest
from cache_helpers import as_tester
from cli_helpers import plangraph, plangraph_main
from plugin_helpers import latest, make_project

from pytest_plangraph.cli import state_cmds
from pytest_plangraph.plan.evidence import ABSENT

FAILING_FIXTURE = """
import pytest

@pytest.fixture(autouse=True)
def _broken():
    raise RuntimeError("every test of this folder fails now")
"""


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    as_tester(monkeypatch)


def test_the_kept_status_answer_misses_when_a_conftest_appears(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(pytester)
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    # the run made tests/__pycache__: a watched folder is trusted by its mtime only 2 s later
    aged = os.stat(root / "tests").st_mtime_ns - 10_000_000_000
    os.utime(root / "tests", ns=(aged, aged))
    calls: list[str] = []
    real = state_cmds._derived_status

    def counting(args: object, out: state_cmds.Output) -> list[tuple[str, str]]:
        calls.append(out.fmt)
        return real(args, out)  # type: ignore[arg-type]

    monkeypatch.setattr(state_cmds, "_derived_status", counting)
    first = plangraph_main(root, "status", "--format", "json")
    assert plangraph_main(root, "status", "--format", "json").out == first.out
    derived = len(calls)
    assert derived <= 1  # the second answer is the kept one

    (root / "tests/conftest.py").write_text(FAILING_FIXTURE)
    after = plangraph_main(root, "status", "--format", "json")
    assert len(calls) == derived + 1  # a miss: derived again
    shutil.rmtree(root / ".plangraph/cache", ignore_errors=True)
    assert after.out == plangraph_main(root, "status", "--format", "json").out
    [node] = [n for n in after.json()["nodes"] if n["id"] == "step-a"]
    assert node["status"] == "stale"


def test_a_link_out_of_the_repository_where_a_conftest_was_absent_stales_the_evidence(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = make_project(pytester)
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    outside = tmp_path_factory.mktemp("outside") / "conftest.py"
    outside.write_text(FAILING_FIXTURE)
    os.symlink(outside, root / "tests/conftest.py")
    status = plangraph_main(root, "status", "--format", "json").json()
    [node] = [n for n in status["nodes"] if n["id"] == "step-a"]
    assert node["status"] == "stale"
    [criterion] = [c for c in node["criteria"] if c["id"] == "ac-marked"]
    [reason] = criterion["reasons"]
    assert (reason["code"], reason["path"], reason["old"], reason["new"]) == (
        "ARTIFACT_CHANGED",
        "tests/conftest.py",
        ABSENT,
        "unreadable",
    )
    refused = plangraph(root, "claim", "step-a", "--by", "agent-7")
    assert refused.code == 1
    # pytest loads it: the tests fail
    pytester.runpytest("--plangraph").assert_outcomes(passed=1, errors=3)


def _signed_env(root: Path) -> dict[str, str]:
    keys = root.parent / "keys"
    keys.mkdir(exist_ok=True)
    made = plangraph_main(keys, "keygen", "--output", str(keys / "ci"))
    assert made.code == 0, made.err
    public = (keys / "ci.pub").read_text().split()[1]
    trusted = keys / "trusted.yaml"
    trusted.write_text(f"format: 1\nkeys: [{{public_key: {public}, roles: [ci]}}]\n")
    return {"PLANGRAPH_SIGNING_KEY_FILE": str(keys / "ci"), "PLANGRAPH_TRUSTED_KEYS": str(trusted)}


def test_a_record_with_absent_subjects_attests_exports_and_reports(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(pytester)
    env = _signed_env(root)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    pytester.runpytest("--plangraph").assert_outcomes(passed=4)
    assert latest(root)["step-a/ac-marked"].subjects["tests/conftest.py"] == ABSENT

    made = plangraph(root, "attest", "step-a", "--output", "a.intoto.json", env=env)
    assert made.code == 0, made.err
    envelope = json.loads((root / "a.intoto.json").read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    names = {s["name"] for s in statement["subject"]}
    assert "tests/test_a.py" in names
    assert "tests/conftest.py" not in names  # no digest to attest it by
    verified = plangraph(root, "attest", "--verify", "a.intoto.json", env=env)
    assert verified.code == 0, verified.out + verified.err

    exported = plangraph(root, "export", "--format", "in-toto", env=env)
    assert exported.code == 0, exported.err
    assert "Traceback" not in exported.err

    for fmt in ("html", "json", "markdown", "text"):
        report = plangraph(root, "report", "--format", fmt, env=env)
        assert report.code in (0, 1), report.err
        assert "Traceback" not in report.err
        if fmt in ("html", "json"):
            assert "tests/conftest.py" in report.out

    quiet = plangraph(root, "impact", "--format", "json", env=env)
    assert quiet.code == 0, quiet.err
    assert "tests/conftest.py" not in quiet.out  # still absent: no change

    (root / "tests/conftest.py").write_text(FAILING_FIXTURE)
    impact = plangraph(root, "impact", "--format", "json", env=env)
    assert "Traceback" not in impact.err
    data = impact.json()
    [changed] = [c for c in data["changed"] if c["path"] == "tests/conftest.py"]
    assert "step-a" in changed["nodes"]
    assert "step-a" in {entry["node"] for entry in data["invalidated"]}
    since = plangraph(root, "impact", "--since", "HEAD", "--format", "json", env=env)
    assert "Traceback" not in since.err
    [added] = [c for c in since.json()["changed"] if c["path"] == "tests/conftest.py"]
    assert "step-a" in added["nodes"]
    refused = plangraph(root, "attest", "step-a", "--output", "b.intoto.json", env=env)
    assert refused.code != 0
    assert "ARTIFACT_CHANGED" in refused.out + refused.err
