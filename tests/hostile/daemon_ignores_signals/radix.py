"""Leaves a double-forked daemon that ignores SIGTERM, SIGHUP and SIGINT and closes every
descriptor, so nothing of the run's pipes or session leads to it."""

import os
import signal
import time

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(number, signal.SIG_IGN)
        os.closerange(0, 256)
        time.sleep(300)
    os._exit(0)

ROOT = 0
NodeId = int


class RadixTree:
    def __init__(self, granule: int) -> None:
        self.granule = granule
