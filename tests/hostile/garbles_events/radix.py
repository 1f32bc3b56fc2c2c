"""Writes lines that are JSON but no event to every pipe it holds, the outcome pipe among them."""

import os

for name in os.listdir("/proc/self/fd"):
    try:
        if os.readlink(f"/proc/self/fd/{name}").startswith("pipe:"):
            os.write(int(name), b'1\n[]\nnull\n{"event": "outcome", "name": 5}\n')
            os.write(int(name), b'{"event": "collected", "names": [1]}\n{"event": 7}\n')
    except OSError:
        pass

ROOT = 0
NodeId = int


class RadixTree:
    def __init__(self, granule: int) -> None:
        self.granule = granule
