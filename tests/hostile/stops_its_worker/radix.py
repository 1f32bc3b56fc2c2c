"""Stops its worker with SIGSTOP, so that no one enforces the time limit (issue 11, case 6).

Where it cannot signal its worker (another user, or its parent outside its PID
namespace) it stops itself instead. Either way the grader's own clock ends the
run as a timeout, at once, for a stopped process never wakes by itself.
"""

import os
import signal

try:
    os.kill(os.getppid(), signal.SIGSTOP)
except OSError:
    pass
os.kill(os.getpid(), signal.SIGSTOP)

ROOT = 0
NodeId = int


class RadixTree:
    def __init__(self, granule: int) -> None:
        self.granule = granule
