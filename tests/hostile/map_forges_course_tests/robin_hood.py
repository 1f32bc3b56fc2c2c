"""A student's ds.05 map that forges the course tests, as forges_course_tests' radix.py does.

The kit's own radix.py imports this file (``from robin_hood import
RobinHoodMap``), so it runs where the tree runs. At import it writes
"collected", one "passed" per course test and "finished" to each pipe it
holds, then to each pipe of every other process of the grader's it can open
through /proc (the run's test process holds the outcome pipe), and exits at
once so that nothing contradicts it. It must meet the same walls as a
hostile radix.py: its process never holds the outcome pipe.
"""

import json
import os

NAMES = [
    "test_hand_example_split_and_match",
    "test_granule_matches_whole_runs_only",
    "test_reinserting_hands_every_value_back",
    "test_lru_order_follows_last_use",
    "test_a_childless_parent_becomes_evictable",
    "test_locks_pin_the_path",
    "test_a_split_inherits_the_locks_below_it",
    "test_unlock_without_a_lock_panics",
    "test_insert_needs_one_value_per_granule",
    "test_freed_slots_are_reused",
    "test_model_based_against_a_naive_map",
    "test_model_based_against_a_naive_map[granule1]",
    "test_model_based_against_a_naive_map[granule2]",
]
EVENTS = [{"event": "collected", "names": NAMES}]
for name in NAMES:
    EVENTS.append({"event": "start", "name": name})
    EVENTS.append({"event": "outcome", "name": name, "status": "passed", "detail": ""})
EVENTS.append({"event": "finished", "exitstatus": 0})
# Framed as the recorder frames its events: a 4-byte big-endian length, then the JSON.
FORGED = b"".join(
    len(body).to_bytes(4, "big") + body for body in (json.dumps(e).encode() for e in EVENTS)
)


def pipes_of(pid: str) -> list[str]:
    found = []
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            path = f"/proc/{pid}/fd/{fd}"
            if os.readlink(path).startswith("pipe:"):
                found.append(path)
    except OSError:
        pass
    return found


def graders() -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if b"grader.sandbox.worker" in cmdline.read() and pid != str(os.getpid()):
                    found.append(pid)
        except (OSError, ValueError):
            pass
    return found


for fd in os.listdir("/proc/self/fd"):
    try:
        os.write(int(fd), FORGED)
    except OSError:
        pass
for pid in graders():
    for path in pipes_of(pid):
        try:
            with open(path, "wb", buffering=0) as pipe:
                pipe.write(FORGED)
        except OSError:
            pass
os._exit(0)
