"""``--output FILE`` of ``export`` and ``attest`` naming what is not a plain file, through the
real ``plangraph``: a symbolic link stays a link and its target gets the output (written whole,
as any output file is), and a named pipe (as ``/dev/stdout`` is when piped) is written to, never
replaced by a file. With no standard output at all, ``export`` and ``import`` say so (exit 2)
instead of printing into nothing."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from cli_helpers import PLANGRAPH, plangraph


@pytest.mark.parametrize("dangling", [False, True], ids=["to-a-file", "dangling"])
def test_export_through_a_link_writes_its_target_and_keeps_the_link(
    jwt: Path, dangling: bool
) -> None:
    (jwt / "exports").mkdir()
    target = jwt / "exports" / "events.jsonl"
    if not dangling:
        target.write_text("the export of yesterday\n", encoding="utf-8")
    os.symlink(Path("exports") / "events.jsonl", jwt / "latest.jsonl")
    result = plangraph(jwt, "export", "--output", "latest.jsonl")
    assert result.code == 0, result.err
    assert (jwt / "latest.jsonl").is_symlink()
    assert target.read_text(encoding="utf-8") == plangraph(jwt, "export").out
    assert sorted(p.name for p in (jwt / "exports").iterdir()) == ["events.jsonl"]
    assert not [p.name for p in jwt.iterdir() if p.name.startswith(".latest")]


def test_export_to_a_named_pipe_writes_into_it(jwt: Path) -> None:
    fifo = jwt.parent / "events.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        result = plangraph(jwt, "export", "--output", str(fifo))
        read, _ = reader.communicate(timeout=15)
    finally:
        reader.kill()
        reader.wait()
    assert result.code == 0, result.err
    assert read.decode("utf-8") == plangraph(jwt, "export").out
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in jwt.parent.iterdir() if "events" in p.name) == ["events.fifo"]


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (("export",), "the events"),
        (("import", "task-master", "tasks.json"), "the plan"),
    ],
    ids=["export", "import"],
)
def test_printing_to_a_closed_standard_output_is_refused(
    jwt: Path, args: tuple[str, ...], what: str
) -> None:
    (jwt / "tasks.json").write_text('{"tasks": [{"id": 1, "title": "t"}]}', encoding="utf-8")
    proc = subprocess.run(
        [str(PLANGRAPH), *args],
        cwd=jwt,
        env={**os.environ, "PLANGRAPH_ACTOR": "tester"},
        preexec_fn=lambda: os.close(1),  # started with no standard output at all
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr == (
        f"plangraph: error: standard output is closed, so {what} cannot be printed: name a "
        "file with --output FILE\n"
    )
