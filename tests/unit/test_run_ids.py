"""Run ids inside the user namespace's map: what ``/proc/self/uid_map`` says, and the ids
runs are drawn from under it (issue 36, item 9).

In a container with a uid map (``podman --uidmap 0:200000:65536``, Kubernetes'
``hostUsers: false``) only some ids exist; a run given an id outside the map
cannot be handed its folder (``chown`` fails with EINVAL), so the grader draws
only mapped ids, and says so (exit 2) where too few are mapped.
"""

from __future__ import annotations

import os

import pytest

from grader.errors import GraderError
from grader.sandbox import procfs
from grader.sandbox.confine import probe, user
from grader.sandbox.confine.user import (
    MIN_RUN_IDS,
    NARROW_RUN_IDS,
    RUN_IDS,
    RunIdsUnmapped,
    choose_run_ids,
)
from grader.sandbox.host import pool

HOST = "         0          0 4294967295\n"
PODMAN = "         0     200000      65536\n"
ROOTLESS = "         0       1000          1\n         1     100000      65536\n"


def test_the_machines_own_map_is_every_id() -> None:
    assert procfs.parse_id_map(HOST) == (range(0, 4294967295),)
    assert procfs.parse_id_map(HOST) == procfs.FULL_ID_MAP


def test_a_map_is_its_lines_by_inside_number() -> None:
    assert procfs.parse_id_map(ROOTLESS) == (range(0, 1), range(1, 65537))
    assert procfs.parse_id_map("5 7 2\n0 9 1\n") == (range(0, 1), range(5, 7))
    assert procfs.parse_id_map("") == ()  # a namespace whose map is not written yet


@pytest.mark.parametrize("line", ["0 0", "0 0 x", "-1 0 5", "0 0 5 5"])
def test_a_line_that_is_no_map_line_is_refused(line: str) -> None:
    with pytest.raises(ValueError, match="not a line of an id map"):
        procfs.parse_id_map(line)


def test_this_process_reads_its_own_maps() -> None:
    for kind in ("uid", "gid"):
        ids = procfs.own_id_map(kind)
        assert ids and all(len(each) > 0 for each in ids)


def test_without_a_uid_map_runs_draw_from_the_reserved_range() -> None:
    whole = procfs.parse_id_map(HOST)
    assert choose_run_ids(whole, whole) == RUN_IDS


def test_a_map_of_65536_ids_gives_the_narrow_band() -> None:
    mapped = procfs.parse_id_map(PODMAN)
    assert choose_run_ids(mapped, mapped) == NARROW_RUN_IDS
    assert 0 not in NARROW_RUN_IDS and user.UNTRUSTED_UID not in NARROW_RUN_IDS
    assert all(ids in range(65536) for ids in (NARROW_RUN_IDS.start, NARROW_RUN_IDS.stop - 1))


def test_only_ids_both_maps_hold_are_drawn() -> None:
    """A run's uid and gid are one number: an id the gid map lacks is no run id."""
    uids = (range(0, 4294967295),)
    gids = (range(0, 62_000),)
    assert choose_run_ids(uids, gids) == range(NARROW_RUN_IDS.start, 62_000)
    part = (range(RUN_IDS.start + 10, RUN_IDS.start + 10 + MIN_RUN_IDS),)
    assert choose_run_ids(part, uids) == part[0]


def test_the_widest_mapped_piece_is_taken() -> None:
    pieces = (range(60_000, 60_100), range(61_000, 64_000), range(64_500, 65_000))
    assert choose_run_ids(pieces, pieces) == range(61_000, 64_000)


@pytest.mark.parametrize(
    "map_text",
    [
        "0 1000 1\n",  # rootless podman without subordinate ids: root alone
        "0 100000 60500\n",  # 500 ids of the narrow band: too few
        "0 0 1000\n65534 65534 1\n",
    ],
)
def test_too_few_mapped_ids_are_refused_saying_why(map_text: str) -> None:
    mapped = procfs.parse_id_map(map_text)
    with pytest.raises(RunIdsUnmapped, match=r"maps only \d+ of the ids .* --uidmap 0:100000"):
        choose_run_ids(mapped, mapped)


def test_two_draws_for_one_run_never_share_an_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a band of two ids the second process of a run still gets the other one."""
    monkeypatch.setattr(user, "run_ids", lambda: range(60_000, 60_002))
    monkeypatch.setattr(procfs, "users_processes", lambda uids: [])
    for _ in range(20):
        first = user.new_identity("uid")
        assert first in (60_000, 60_001)
        assert user.new_identity("uid", (first,)) == ({60_000, 60_001} - {first}).pop()
        drawn = user.new_identities("namespaces", ("test", "impl"))
        assert {drawn["test"], drawn["impl"]} == {60_000, 60_001}
    assert user.new_identities("none", ("test", "impl")) == {"test": None, "impl": None}


def test_an_id_a_process_holds_is_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the narrow band another worker's live run may hold an id: it is never drawn."""
    monkeypatch.setattr(user, "run_ids", lambda: range(60_000, 60_003))
    monkeypatch.setattr(procfs, "users_processes", lambda uids: [1] if 60_001 in uids else [])
    drawn = {user.new_identity("namespaces", (60_000,)) for _ in range(30)}
    assert drawn == {60_002}


def test_the_grader_stops_with_exit_2_where_too_few_ids_are_mapped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unmapped() -> range:
        raise RunIdsUnmapped("this container's user namespace maps only 1 of the ids")

    monkeypatch.setattr(probe, "isolation_level", lambda: "uid")
    monkeypatch.setattr(user, "run_ids", unmapped)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(GraderError, match=r"maps only 1 of the ids.*nothing was graded") as raised:
        pool.require_isolation("none")
    assert raised.value.exit_code == 2
    # Root whose namespace does not map nobody either: the level probe finds no level, and the
    # reason given is the map.
    monkeypatch.setattr(probe, "isolation_level", lambda: "none")
    with pytest.raises(GraderError, match=r"^this container's user namespace maps only 1"):
        pool.require_isolation("uid")
    assert pool.require_isolation("none", at_most="none") == "none"  # the kit's tests at none
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert pool.require_isolation("none") == "none"  # not root: no run ids needed
