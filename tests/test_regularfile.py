"""The one reader of regular files (:mod:`pytest_plangraph.regularfile`): a FIFO at the path is
refused at once, never waited on; a device and a directory are refused; a file over the limit is
refused, or cut with ``cut``; a symbolic link is followed, or refused with
``follow_symlinks=False``; and no module of the package opens a file its own way."""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

import pytest

from pytest_plangraph.regularfile import (
    NotRegularFileError,
    TooLargeError,
    open_regular,
    read_regular,
)

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_plangraph"
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_regular_file_is_read_whole_with_its_stat(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(b"\x00abc\n" * 1000)
    assert read_regular(path) == b"\x00abc\n" * 1000
    assert read_regular(str(path), 5000) == b"\x00abc\n" * 1000  # exactly at the limit
    info, data = read_regular(path, with_stat=True)
    assert data == path.read_bytes() and stat.S_ISREG(info.st_mode)
    assert (info.st_ino, info.st_size) == (path.stat().st_ino, 5000)
    (tmp_path / "empty").write_bytes(b"")
    assert read_regular(tmp_path / "empty", 0) == b""


@needs_fifo
def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    outcome: list[BaseException | bytes] = []

    def read() -> None:
        try:
            outcome.append(read_regular(fifo, 100))
        except BaseException as exc:  # told to the test below
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=10)
    if reader.is_alive():  # it waits for a writer: give it one, so the thread ends
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a FIFO waited for a writer")
    [error] = outcome
    assert isinstance(error, NotRegularFileError) and stat.S_ISFIFO(error.mode)
    assert str(error) == f"{fifo} is not a regular file"
    assert error.strerror == "it is not a regular file"  # a cause some messages show
    with pytest.raises(NotRegularFileError):
        open_regular(fifo)


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="no /dev/null here")
@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
def test_a_device_is_refused(device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"no {device} here")
    with pytest.raises(NotRegularFileError) as caught:
        read_regular(device)  # /dev/zero would be read without end
    assert stat.S_ISCHR(caught.value.mode)
    with pytest.raises(NotRegularFileError):
        read_regular(device, 10, cut=True)  # not even its first bytes


def test_a_directory_is_refused(tmp_path: Path) -> None:
    """As opening it for reading refuses it: the cause some messages show ("Is a directory")."""
    with pytest.raises(IsADirectoryError) as caught:
        read_regular(tmp_path, 10**9)
    assert caught.value.errno == errno.EISDIR
    assert caught.value.strerror == os.strerror(errno.EISDIR)
    assert not isinstance(caught.value, NotRegularFileError)
    with pytest.raises(IsADirectoryError):
        open_regular(tmp_path, follow_symlinks=False)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing")


def test_a_file_over_the_limit_is_refused_or_cut(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 101)
    with pytest.raises(TooLargeError) as caught:
        read_regular(path, 100)
    assert caught.value.size == 101 and isinstance(caught.value, OSError)
    assert caught.value.strerror == "it is larger than 100 bytes"
    with pytest.raises(TooLargeError):
        open_regular(path, 100)
    assert read_regular(path, 100, cut=True) == b"x" * 100
    assert read_regular(path, 200, cut=True) == b"x" * 101
    info, data = read_regular(path, 7, cut=True, with_stat=True)
    assert (info.st_size, data) == (101, b"x" * 7)


@pytest.mark.skipif(not os.path.isfile("/proc/self/status"), reason="no /proc here")
def test_a_file_larger_than_its_stat_says_is_read_on(tmp_path: Path) -> None:
    """A file of ``/proc`` says it holds nothing and holds some lines: as a file that grew
    since its stat, it is read to its end, and the limit holds for what was read."""
    info, data = read_regular("/proc/self/status", with_stat=True)
    assert info.st_size == 0 and b"\nPid:" in data
    with pytest.raises(TooLargeError):
        read_regular("/proc/self/status", 10)
    assert len(read_regular("/proc/self/status", 10, cut=True)) == 10


def test_a_symlink_is_followed_unless_told_not_to(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_bytes(b"through the link")
    link = tmp_path / "link"
    link.symlink_to(target)
    assert read_regular(link) == b"through the link"
    info, _ = read_regular(link, with_stat=True)
    assert info.st_ino == target.stat().st_ino  # the target's stat, not the link's
    with pytest.raises(OSError) as caught:
        read_regular(link, follow_symlinks=False)
    assert caught.value.errno == errno.ELOOP
    assert read_regular(target, follow_symlinks=False) == b"through the link"
    (tmp_path / "to-dev").symlink_to(os.devnull)
    with pytest.raises(NotRegularFileError):  # followed to what it names, and refused
        read_regular(tmp_path / "to-dev")


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="no /proc here")
def test_nothing_is_left_open(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_bytes(b"12345")
    before = _open_fds()
    for _ in range(20):
        with pytest.raises(IsADirectoryError):
            read_regular(tmp_path)
        with pytest.raises(NotRegularFileError):
            read_regular(os.devnull)
        with pytest.raises(TooLargeError):
            read_regular(path, 2)
        assert read_regular(path) == b"12345"
        handle, _ = open_regular(path)
        with handle:
            assert handle.read() == b"12345"
    assert _open_fds() == before


def test_no_module_opens_a_file_its_own_way() -> None:
    """Only this reader opens without waiting (and :mod:`.bundle`, which runs before any other
    module of the package is imported, with its copy written out)."""
    own = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if "O_NONBLOCK" in path.read_text(encoding="utf-8")
    }
    assert own == {"regularfile.py", "bundle.py"}


@needs_fifo
def test_the_readers_messages_say_what_they_said(tmp_path: Path) -> None:
    """What the commands reading through it tell of a FIFO, a directory, a device and a file
    too large: the causes a user reads are those they gave with their own readers."""
    from pytest_plangraph.cli.attest_cmds import read_text
    from pytest_plangraph.errors import UsageError
    from pytest_plangraph.store.keys import load_private, load_trusted

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    with open(tmp_path / "huge", "wb") as handle:
        handle.truncate((64 << 20) + 1)  # sparse: nothing written
    causes = {"fifo": "it is not a regular file", "dir": "Is a directory"}
    causes[os.devnull] = "it is not a regular file"
    for name, cause in causes.items():
        path = tmp_path / name
        with pytest.raises(UsageError) as private:
            load_private(path, "V")
        assert f"V={path}: the private key cannot be read ({cause}); point V" in str(private.value)
        with pytest.raises(UsageError) as trusted:
            load_trusted(path, "V")
        assert f"the trusted-keys file cannot be read ({cause});" in str(trusted.value)
    with pytest.raises(UsageError, match="fifo is not a regular file; name the file to read"):
        read_text(tmp_path / "fifo")
    with pytest.raises(UsageError, match=f"cannot read {tmp_path / 'dir'}: Is a directory"):
        read_text(tmp_path / "dir")
    with pytest.raises(UsageError, match="huge is larger than 64 MiB; name the right file"):
        read_text(tmp_path / "huge")
