"""What a run at ``uid`` leaves where every user may write, removed after it.

At ``uid`` a run has no mount namespace of its own, so it could leave a note for a later
run in ``/tmp`` and its like; the runs of a pool go one at a time there, and after each
``remove_leftovers`` removes what the run's user owns in them.
"""

from __future__ import annotations

import contextlib
import os
import shutil

from grader.sandbox.confine.policy import Confinement

SHARED_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue")
"""The folders every user may write on a usual Linux machine: where a run at the ``uid``
level, which has no mount namespace of its own, could leave a note for a later run."""


def remove_leftovers(confinement: Confinement) -> None:
    """Remove everything the untrusted user owns in ``SHARED_FOLDERS`` and in the folders
    below them that every user may write (``/tmp/.X11-unix``): what a run left there.

    Only the ``uid`` level needs it, and there the runs of a pool go one at a
    time and this runs after each: at ``namespaces`` a run cannot write outside
    its own folder, and at ``none`` its files are the grader's user's.
    """
    if confinement.level != "uid":
        return
    todo = list(SHARED_FOLDERS)
    while todo:
        try:
            entries = list(os.scandir(todo.pop()))
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):
                status = entry.stat(follow_symlinks=False)
                directory = entry.is_dir(follow_symlinks=False)
                if status.st_uid != confinement.uid:
                    if directory and status.st_mode & 0o002:
                        todo.append(entry.path)
                elif directory:
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
