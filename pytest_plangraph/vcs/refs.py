"""Reading git's refs from its files, without a git process: which object a revision's name
points to (:func:`tip`), for the revision cache (:mod:`.revcache`) to key a revision on.

Only the plain forms are read: a name git finds by its rules (``NAME``, ``refs/NAME``,
``refs/tags/NAME``, ``refs/heads/NAME``, ``refs/remotes/NAME``, ``refs/remotes/NAME/HEAD``, the
first that exists), as a loose file under the common git directory or a line of
``packed-refs``, symbolic refs followed, and ``HEAD`` from the working tree's own git
directory; then ``~N`` and ``^N`` steps. Anything else — ``@{…}``, ``:/text``, ``^{…}``, a name
that looks like an object id, a name that may be a root or per-working-tree ref (a file of
that name in a git directory, ``refs/bisect/…``), refs kept as a ``reftable``, an environment
that moves the git directory or the refs (``GIT_DIR``, ``GIT_NAMESPACE``, …), a file that is
not as git writes it — is None: git is asked, as without this module.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..regularfile import open_regular, read_regular

__all__ = ["RefFiles", "git_dirs", "is_object_id", "read_git_dirs", "split_revision"]

_DIGITS = "0123456789"
_STEPS = str.maketrans("", "", f"~^{_DIGITS}")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_NAME = str.maketrans("", "", f"{_LETTERS}{_LETTERS.upper()}{_DIGITS}._/-")
_HEX = str.maketrans("", "", f"{_DIGITS}abcdefABCDEF")
_LOWER_HEX = str.maketrans("", "", f"{_DIGITS}abcdef")
"""What :meth:`str.translate` deletes: a text is made of these when nothing is left (the
checks of this module are made without :mod:`re`, whose patterns cost a command's start)."""
_RULES: tuple[str, ...] = ("{}", "refs/{}", "refs/tags/{}", "refs/heads/{}", "refs/remotes/{}")
_RULES += ("refs/remotes/{}/HEAD",)
"""git's rules for the full name of a ref given in short (``ref_rev_parse_rules``), in order."""
_OWN = ("refs/bisect/", "refs/worktree/", "refs/rewritten/", "main-worktree/", "worktrees/")
_ENVIRONMENT = (
    "GIT_DIR",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_WORK_TREE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_REPLACE_REF_BASE",
    "GIT_REF_PARANOIA",
)


def split_revision(rev: str) -> tuple[str, str] | None:
    """*rev* as (name, ``~N``/``^N`` steps) when it is in the forms read here, else None."""
    start = _first_step(rev)
    name, steps = rev[:start], rev[start:]
    if steps.translate(_STEPS) or not _plain_name(name):  # steps: from the first ~ or ^
        return None
    return name, steps


def _first_step(rev: str) -> int:
    found = [i for i in (rev.find("~"), rev.find("^")) if i >= 0]
    return min(found) if found else len(rev)


def _plain_name(name: str) -> bool:
    """Whether *name* is a ref name git would take as it is (never an object id, an option or
    a name git rejects)."""
    if not name or name.translate(_NAME) or name.startswith("-"):
        return False
    if 4 <= len(name) <= 64 and not name.translate(_HEX):
        return False  # it may name an object
    parts = name.split("/")
    if any(not p or p.startswith(".") or p.endswith(".lock") for p in parts):
        return False
    return ".." not in name and not name.endswith(".")


def is_object_id(text: str) -> bool:
    """Whether *text* is an object id as git writes it (40 or 64 lowercase hex digits)."""
    return len(text) in (40, 64) and not text.translate(_LOWER_HEX)


def git_dirs(top: Path) -> tuple[Path, Path] | None:
    """The git directory of the working tree *top* and the common one (:func:`read_git_dirs`);
    None when the environment may move them or the refs (``GIT_DIR``, ``GIT_NAMESPACE``, …)."""
    if any(name in os.environ for name in _ENVIRONMENT):
        return None
    return read_git_dirs(top)


def read_git_dirs(top: Path) -> tuple[Path, Path] | None:
    """The git directory of the working tree *top* and the common one (the same but in a
    linked working tree), read from ``.git``; None when they are not plain files to read (a
    FIFO would block: git is asked instead)."""
    dot = top / ".git"
    try:
        if dot.is_dir():
            return dot, dot
        if not dot.is_file():
            return None
        text = dot.read_text(encoding="utf-8")
        if not text.startswith("gitdir:"):
            return None
        git_dir = top / text[len("gitdir:") :].strip()
        shared = git_dir / "commondir"
        if shared.is_file():
            return git_dir, git_dir / shared.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return git_dir, git_dir


class RefFiles:
    """The refs of the working tree *top*, read from its git directories (read once each:
    ``packed-refs`` is read at the first name not found as a loose file)."""

    __slots__ = ("_common", "_git_dir", "_packed")

    def __init__(self, git_dir: Path, common: Path) -> None:
        self._git_dir = git_dir
        self._common = common
        self._packed: bytes | None = None

    def tip(self, name: str) -> str | None:
        """The object id *name* (a name :func:`split_revision` gave) points to, found by git's
        rules; None when it is not found here or may be found otherwise by git."""
        if name == "HEAD":
            return self._follow(self._git_dir / "HEAD", 0)
        rules = _RULES
        if not name.startswith("refs/"):
            if os.path.lexists(self._git_dir / name) or os.path.lexists(self._common / name):
                return None  # a root ref, or a file git might take for one
            rules = _RULES[1:]
        for rule in rules:
            ref = rule.format(name)
            if ref.startswith(_OWN):
                return None
            found = self._ref(ref, 0)
            if found != "":
                return found
        return None

    def _ref(self, ref: str, depth: int) -> str | None:
        """The object id of the full ref name *ref*; ``""`` when there is none; None when it
        cannot be read here."""
        if depth > 5 or ref.startswith(_OWN):
            return None
        path = self._common / ref
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return self._packed_ref(ref)
        except OSError:
            return None
        if stat.S_ISDIR(mode):  # a folder of refs (``refs/remotes/origin``): not this one
            return self._packed_ref(ref)
        return self._follow(path, depth) if stat.S_ISREG(mode) else None

    def _follow(self, path: Path, depth: int) -> str | None:
        """The object id the loose ref file at *path* names, symbolic refs followed."""
        try:  # HEAD is looked at without an lstat: a FIFO there must not block
            with open_regular(path)[0] as file:
                data = file.read(512)
        except OSError:  # a folder, unreadable, no regular file: git may see it otherwise
            return None
        if data.startswith(b"ref: "):
            target = data[5:].strip().decode("ascii", "replace")
            if not target.startswith("refs/") or not _plain_name(target):
                return None
            found = self._ref(target, depth + 1)
            return None if found == "" else found  # a branch not born yet
        value = data.rstrip(b"\n")
        text = value.decode("ascii", "replace")
        return text if is_object_id(text) else None

    def _packed_ref(self, ref: str) -> str | None:
        """The object id of *ref* in ``packed-refs``; ``""`` when it is not there."""
        if self._packed is None:
            try:  # a FIFO there would block (NotRegularFileError, an OSError: git is asked)
                self._packed = read_regular(self._common / "packed-refs")
            except FileNotFoundError:
                self._packed = b""
            except OSError:
                return None
        data = self._packed
        at = data.find(f" {ref}\n".encode("ascii"))
        if at < 0:
            return ""
        value = data[data.rfind(b"\n", 0, at) + 1 : at]
        text = value.decode("ascii", "replace")
        return text if is_object_id(text) else None
