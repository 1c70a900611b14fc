"""Whole numbers of more digits than Python converts (5,000) in the files commands read, through
the real ``plangraph``: a task-master ``tasks.json`` given to ``import`` and the trusted-keys
file of ``PLANGRAPH_TRUSTED_KEYS`` are refused with one message naming the file (exit 2), never
a ``ValueError`` traceback."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import plangraph

LONG = "9" * 5000


def test_a_tasks_json_with_a_number_too_long_to_read_is_refused(tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text(
        '{"tasks": [{"id": ' + LONG + ', "title": "t"}]}', encoding="utf-8"
    )
    result = plangraph(tmp_path, "import", "task-master", "tasks.json", "--output", "plan.yaml")
    assert result.code == 2 and "Traceback" not in result.err, result.err[-400:]
    assert result.err.startswith("plangraph: error: tasks.json: "), result.err
    assert "a number too long to read" in result.err and "fix the file" in result.err
    assert result.err.count("\n") == 1 and len(result.err) < 300, result.err
    assert not (tmp_path / "plan.yaml").exists()


def test_a_trusted_keys_file_with_a_number_too_long_to_read_is_refused(jwt: Path) -> None:
    trusted = jwt.parent / "trusted.yaml"
    trusted.write_text(f"format: {LONG}\nkeys: []\n", encoding="utf-8")
    result = plangraph(jwt, "status", env={"PLANGRAPH_TRUSTED_KEYS": str(trusted)})
    assert result.code == 2 and "Traceback" not in result.err, result.err[-400:]
    assert result.err.startswith(f"plangraph: error: PLANGRAPH_TRUSTED_KEYS={trusted}: "), (
        result.err
    )
    assert "a number too long to read" in result.err and "fix the file" in result.err
    assert result.err.count("\n") == 1 and len(result.err) < 400, result.err
