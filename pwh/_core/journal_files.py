"""Whether a SQLite journal's files are still the ones its connection opened, checked cheaply.

:class:`FileWatch` answers before and after every commit. The database file is one ``stat``. The
``-wal`` is not statted on each commit: on ext4, a ``stat`` (or ``fstat``) of a file between its
fsyncs makes the next fsync about 0.07 ms slower, close to half of a whole durable commit there.
Instead the watch keeps a read-only descriptor on the ``-wal`` it saw (its size, by ``lseek``,
costs nothing) and ``stat``s the *directory*: a file removed, created or renamed onto the path
changes the directory's modification time. A directory time is trusted only once it is well in
the past when seen ("racy" times, as git calls them: a change within the same clock tick would
leave it equal). Until then, and whenever it moved, the directory is read for the inode its
``-wal`` entry names; only a mismatch (or a big directory) costs a full ``stat``, which decides.

The limit: where a directory's times do not move when a name in it is replaced (FAT, some network
file systems), a ``-wal`` renamed over once the time is trusted goes unseen; a truncated ``-wal``
and any change to the database file are still seen.
"""

from __future__ import annotations

import contextlib
import os
import time

__all__ = ["FileWatch", "file_mark"]

Mark = tuple[int, int, int]  # (device, inode, size)

# A directory time younger than this when seen is not trusted to change on the next change
# (coarse kernel clocks tick every few ms; a remote file system's clock may differ a little).
_RACY_NS = 1_000_000_000
# Beyond this many names, reading the directory costs more than the stat it saves.
_MAX_LISTED = 256


def file_mark(path: str) -> Mark | None:
    """(device, inode, size) of the file at ``path`` now, or None if there is none. A plain stat:
    opening and closing a descriptor on a SQLite file would drop this process's locks on it."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size


def _dir_mark(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns


class FileWatch:
    """The database file and its ``-wal`` as last seen, and a cheap look at them now.

    ``changed()`` is ``"removed"`` (the database file is gone from its path), ``"damaged"`` (it or
    the ``-wal`` was replaced or got smaller: pwh never vacuums or truncates them), or None (as
    last seen; their sizes are remembered again, since other writers only make them grow).
    """

    def __init__(self, db_path: str) -> None:
        self._db_path = db_path
        self._wal_path = db_path + "-wal"
        self._dir_path = os.path.dirname(db_path) or "."
        self._wal_fd: int | None = None
        self._dir: tuple[int, int, int, int] | None = None
        self._dir_trusted = False
        self._db: Mark | None = None
        self._wal: Mark | None = None
        self.reset()

    def reset(self) -> None:
        """Take the files at their paths now as the journal's own (on open, and after a restore)."""
        self._close_wal()
        self._look_at_dir()
        self._db = file_mark(self._db_path)
        self._wal = file_mark(self._wal_path)
        self._open_wal()

    def changed(self) -> str | None:
        db0, wal0 = self._db, self._wal
        db1 = file_mark(self._db_path)
        if db1 is None or db0 is None:
            return "removed"
        wal1 = self._wal_now()
        wal_changed = wal0 is not None and (wal1 is None or wal1[:2] != wal0[:2] or wal1[2] < wal0[2])
        if db1[:2] != db0[:2] or db1[2] < db0[2] or wal_changed:
            return "damaged"
        self._db, self._wal = db1, wal1
        if wal0 is None and wal1 is not None:
            self._open_wal()  # the -wal appeared since (a journal opened before its first write)
        return None

    def close(self) -> None:
        self._close_wal()

    # -- the -wal, cheaply ------------------------------------------------------------------------

    def _wal_now(self) -> Mark | None:
        if self._wal is not None and self._wal_fd is not None:
            if self._dir_trusted and _dir_mark(self._dir_path) == self._dir:
                held = self._held()  # no name in the directory changed: the path names this file
                if held is not None:
                    return held
            self._look_at_dir()
            if self._listed_inode() == self._wal[1]:  # a hint: a mismatch is statted below
                held = self._held()
                if held is not None:
                    return held
        return file_mark(self._wal_path)

    def _held(self) -> Mark | None:
        """The -wal as seen through the descriptor this watch holds on it, its size read now."""
        assert self._wal is not None and self._wal_fd is not None
        try:
            return self._wal[0], self._wal[1], os.lseek(self._wal_fd, 0, os.SEEK_END)
        except OSError:
            return None

    def _listed_inode(self) -> int | None:
        """The inode number the directory lists for the ``-wal``'s name (no stat of the file
        itself), or None if the name is absent or the directory is too big to read each time."""
        name = os.path.basename(self._wal_path)
        try:
            with os.scandir(self._dir_path) as entries:
                for count, entry in enumerate(entries):
                    if count >= _MAX_LISTED:
                        return None
                    if entry.name == name:
                        return entry.inode()
        except OSError:
            return None
        return None

    def _look_at_dir(self) -> None:
        seen_at = time.time_ns()
        self._dir = _dir_mark(self._dir_path)
        self._dir_trusted = self._dir is not None and seen_at - max(self._dir[2], self._dir[3]) > _RACY_NS

    def _open_wal(self) -> None:
        if self._wal is None or self._wal_fd is not None:
            return
        try:
            fd = os.open(self._wal_path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != self._wal[:2]:  # replaced in between: watch by path only
            os.close(fd)
            return
        self._wal_fd = fd

    def _close_wal(self) -> None:
        if self._wal_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._wal_fd)
            self._wal_fd = None
