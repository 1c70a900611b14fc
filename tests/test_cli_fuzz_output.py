"""``--output FILE`` of ``export`` and ``attest`` naming what is not a plain file, through the
real ``plangraph``: a symbolic link stays a link and its target gets the output (written whole,
as any output file is), and a named pipe (as ``/dev/stdout`` is when piped) is written to, never
replaced by a file."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from cli_helpers import plangraph


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
