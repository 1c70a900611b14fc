"""``--output FILE`` of ``export`` and ``attest`` naming what is not a plain file, through the
real ``plangraph``: a symbolic link stays a link and its target gets the output (written whole,
as any output file is), and a named pipe (as ``/dev/stdout`` is when piped) is written to, never
replaced by a file. With no standard output at all, ``export`` and ``import`` say so (exit 2)
instead of printing into nothing. ``impact`` answering from its kept answer (bytes copied to
the standard output's buffer) fails to print as it does afresh: a broken pipe or no standard
output is a quiet exit 0, a descriptor not open for writing or a full disk one message, exit 2."""

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


def _impact_printing_to(jwt: Path, where: str) -> tuple[int, str, bool]:
    """``plangraph impact`` with its standard output *where*: its exit code, what it wrote on
    stderr (the import-time lines aside) and whether it answered from its kept answer (the
    bytes kept: the module that renders a report never imported)."""
    env = {**os.environ, "PLANGRAPH_ACTOR": "tester", "PYTHONPROFILEIMPORTTIME": "1"}
    read, write = os.pipe()
    os.close(read)  # a reader gone before the first byte: every write is a broken pipe
    stdout = {
        "broken-pipe": lambda: write,
        "closed": lambda: subprocess.DEVNULL,  # closed in the child below
        "read-only": lambda: os.open(os.devnull, os.O_RDONLY),
        "full-disk": lambda: os.open("/dev/full", os.O_WRONLY),
    }[where]()
    proc = subprocess.run(
        [str(PLANGRAPH), "impact"],
        cwd=jwt,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        preexec_fn=(lambda: os.close(1)) if where == "closed" else None,
        text=True,
        timeout=120,
        check=False,
    )
    os.close(write)
    if isinstance(stdout, int) and stdout != write and stdout >= 0:
        os.close(stdout)
    lines = proc.stderr.splitlines(keepends=True)
    said = "".join(line for line in lines if not line.startswith("import time:"))
    return proc.returncode, said, "pytest_plangraph.cli.impact_text" not in proc.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    ("where", "code", "said"),
    [
        ("broken-pipe", 0, ""),
        ("closed", 0, ""),
        ("read-only", 2, "plangraph: error: Bad file descriptor\n"),
        ("full-disk", 2, "plangraph: error: No space left on device\n"),
    ],
)
def test_impact_from_its_kept_answer_fails_to_print_as_it_does_afresh(
    jwt: Path, where: str, code: int, said: str
) -> None:
    (jwt / "src/auth/login.py").write_text("# changed\n", encoding="utf-8")  # a report to print
    for kept in (jwt / ".plangraph/cache").glob("impact-*.json"):
        kept.unlink()
    fresh = _impact_printing_to(jwt, where)
    kept = _impact_printing_to(jwt, where)
    assert fresh == (code, said, False)
    assert kept == (code, said, True)  # the kept answer, printed the same way (or not at all)
    assert plangraph(jwt, "impact").out  # and kept whole, for a standard output that works
