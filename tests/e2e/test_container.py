"""The staff edition's image, built and run the way the Kubernetes pods run it (issue 36).

The image is built with podman from ``deploy/container/`` with the build's
network off (so from the wheelhouse alone), on a base made from Debian's
packages (registry images cannot be pulled on the kit's CI machines):
``debootstrap`` once, imported into podman under a tag keyed by its packages
and the week, so later sessions reuse it. Then a small class is graded as two
shards, each in a container started as ``grade-class-job.yaml`` starts its pod
(its command and arguments, its security context turned into podman's flags:
not privileged, the capabilities it names, the class read-only, no network),
the shards are merged as ``merge-job.yaml`` merges them, and the rows must be
those of the class graded at once: at isolation ``uid``. Then with a uid map
(what ``hostUsers: false`` gives a pod), as ``grade-class-job-userns.yaml``
(``namespaces``), and with a map too small to grade in (exit 2, saying why).

Where podman, runc or debootstrap is missing, or the grader is not root, the
tests skip with the reason (``.ci/run`` installs them). podman runs with
``runc`` (``crun`` refuses the CI machines' hybrid cgroups) and explicit
``--ulimit`` values under the machine's hard limits (podman's defaults exceed
them and the container does not start).
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import json
import os
import re
import resource
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import make_submission
from packaging.utils import canonicalize_name

import grader.cli
from grader.commands.bundle import pinned_dependencies
from grader.course.gradebook import UNSTABLE_COLUMNS
from grader.output.check_json import stable_part
from grader.sandbox.confine.user import NARROW_RUN_IDS, RUN_IDS

KIT = Path(__file__).resolve().parents[2]
KUBERNETES = KIT / "deploy" / "kubernetes"
BUILD = KIT / "deploy" / "container" / "build"
WAIT = KUBERNETES / "wait-for-job"
SUITE = "bookworm"
PACKAGES = "python3,python3-venv,python3-pip,python-is-python3"
BASE_REPOSITORY = "localhost/ds07-grader-test-base"
RUN_ID_MAP = "0:200000:65536"
"""What Kubernetes gives a pod with ``hostUsers: false``: 65536 ids from 0, from a host range."""
MAPPED_ROOT = 200_000
CLASS = {"amy": "strong", "cal": "weak", "gil": "buggy_radix", "ida": "syntax_error_in_tests"}
EMPTY = "kim"
STUDENTS = sorted([*CLASS, EMPTY])


def missing_tools() -> str | None:
    """Why the container tests cannot run here, or ``None``."""
    if os.geteuid() != 0:
        return "the container tests run podman as root (the tests are not root)"
    for tool in ("podman", "runc"):
        if shutil.which(tool) is None:
            return f"no {tool} installed (Debian: apt-get install podman runc debootstrap)"
    if sys.version_info[:2] != (3, 11):
        return "the image's wheels are this Python's, and the image's Python is 3.11"
    return None


def podman(*arguments: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["podman", *arguments], capture_output=True, text=True, timeout=timeout, check=False
    )


def limits() -> list[str]:
    """``--ulimit`` flags at or under this machine's hard limits (podman's defaults are above
    them, and the container would not start)."""
    flags = []
    for name, which in (("nofile", resource.RLIMIT_NOFILE), ("nproc", resource.RLIMIT_NPROC)):
        hard = resource.getrlimit(which)[1]
        value = 4096 if hard == resource.RLIM_INFINITY else min(hard, 4096)
        flags += ["--ulimit", f"{name}={value}:{value}"]
    return flags


RUNTIME = ["--runtime", "runc", *limits()]


@pytest.fixture(scope="session")
def base_image() -> str:
    """A Debian bookworm image with Python 3.11 (debootstrap, then ``podman import``), made
    once and kept in podman's store under a tag of its packages and the week."""
    reason = missing_tools()
    if reason:
        pytest.skip(reason)
    key = hashlib.sha256(f"{SUITE} minbase {PACKAGES}".encode()).hexdigest()[:12]
    week = datetime.date.today().strftime("%G-w%V")
    tag = f"{BASE_REPOSITORY}:{SUITE}-{key}-{week}"
    if podman("image", "exists", tag).returncode == 0:
        return tag
    if shutil.which("debootstrap") is None:
        pytest.skip(
            "no debootstrap installed to make the base (Debian: apt-get install debootstrap)"
        )
    with tempfile.TemporaryDirectory(prefix="ds07-base-") as temporary:
        root = Path(temporary) / "root"
        command = ["debootstrap", "--variant=minbase", f"--include={PACKAGES}", SUITE, str(root)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
        if done.returncode != 0:
            last = (done.stdout + done.stderr).strip().splitlines()[-3:]
            pytest.skip(f"debootstrap could not make the base here: {' / '.join(last)}")
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        imported = subprocess.run(
            ["podman", "import", "-", tag], stdin=tar.stdout, capture_output=True, timeout=600
        )
        assert tar.wait() == 0 and imported.returncode == 0, imported.stderr
    listed = podman("images", "--format", "{{.Repository}}:{{.Tag}}", BASE_REPOSITORY).stdout
    for old in set(listed.split()) - {tag}:  # earlier weeks' bases
        podman("rmi", old)
    return tag


@pytest.fixture(scope="session")
def image(base_image: str) -> Iterator[str]:
    """The staff edition's image, built by ``deploy/container/build`` with no network."""
    tag = f"localhost/ds07-grader-test:{secrets.token_hex(4)}"
    env = {**os.environ, "BASE": base_image, "PYTHON": sys.executable}
    done = subprocess.run(
        [str(BUILD), tag, "--network", "none", *RUNTIME],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    try:
        yield tag
    finally:
        podman("rmi", "--force", tag)


def pod_of(name: str) -> dict[str, Any]:
    (job,) = [doc for doc in yaml.safe_load_all((KUBERNETES / name).read_text()) if doc]
    pod: dict[str, Any] = job["spec"]["template"]["spec"]
    return pod


TRANSLATED = {
    "privileged",
    "runAsUser",
    "runAsGroup",
    "allowPrivilegeEscalation",
    "capabilities",
    "seccompProfile",
    "appArmorProfile",
}
"""The security-context fields ``security_flags`` knows: any other fails the test, never
passes silently untranslated."""


def security_flags(pod: dict[str, Any], container: dict[str, Any]) -> list[str]:
    """podman's flags for what the pod's and the container's security context ask for."""
    context = container.get("securityContext", {})
    assert set(context) <= TRANSLATED, f"no podman flag for {set(context) - TRANSLATED}"
    assert set(pod) <= {"restartPolicy", "hostUsers", "containers", "volumes"}, set(pod)
    flags = ["--privileged"] if context.get("privileged") else []
    flags += ["--user", f"{context.get('runAsUser', 0)}:{context.get('runAsGroup', 0)}"]
    if context.get("allowPrivilegeEscalation") is False:
        flags += ["--security-opt", "no-new-privileges"]
    for capability in context.get("capabilities", {}).get("drop", []):
        flags += ["--cap-drop", capability.lower()]
    for capability in context.get("capabilities", {}).get("add", []):
        flags += ["--cap-add", capability]
    seccomp = context.get("seccompProfile", {}).get("type", "RuntimeDefault")
    assert seccomp in ("RuntimeDefault", "Unconfined")  # podman's default is its RuntimeDefault
    if seccomp == "Unconfined":
        flags += ["--security-opt", "seccomp=unconfined"]
    if context.get("appArmorProfile", {}).get("type") == "Unconfined":
        flags += ["--security-opt", "apparmor=unconfined"]
    if pod.get("hostUsers") is False:
        flags += ["--uidmap", RUN_ID_MAP, "--gidmap", RUN_ID_MAP]
    return flags


def run_pod(
    image: str,
    manifest: str,
    folders: dict[str, Path],
    env: dict[str, str],
    args: list[str] | None = None,
    extra: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """Start the container of ``manifest``'s pod as the cluster would: its command and
    arguments (or ``args``), its security context, its volumes at its mount paths
    (``folders`` by volume name, read-only where it says so), its environment and ``env``."""
    pod = pod_of(manifest)
    (container,) = pod["containers"]
    flags = ["run", "--rm", *RUNTIME, "--network", "none", *security_flags(pod, container)]
    for mount in container["volumeMounts"]:
        assert mount["name"] in folders, f"the test has no folder for the volume {mount['name']}"
        read_only = ":ro" if mount.get("readOnly") else ""
        flags += ["--volume", f"{folders[mount['name']]}:{mount['mountPath']}{read_only}"]
    for name, value in {**{e["name"]: e["value"] for e in container.get("env", [])}, **env}.items():
        flags += ["--env", f"{name}={value}"]
    command = [*container["command"], *(container["args"] if args is None else args)]
    return podman(*flags, *extra, image, *command, timeout=1200)


def unsharded(manifest: str, out: str) -> list[str]:
    """The grade container's arguments grading the whole class into ``out``, not a shard."""
    (container,) = pod_of(manifest)["containers"]
    (line,) = container["args"]
    whole = re.sub(r'--shard "\S+"\s+', "", line)
    whole, count = re.subn(r'--out "\S+"', f"--out {out}", whole)
    assert count == 1 and "--shard" not in whole
    return [whole]


def rows(folder: Path) -> dict[str, dict[str, str]]:
    with (folder / "gradebook.csv").open(encoding="utf-8", newline="") as stream:
        return {
            row["student"]: {k: v for k, v in row.items() if k not in UNSTABLE_COLUMNS}
            for row in csv.DictReader(stream)
        }


def reports(folder: Path) -> dict[str, dict[str, Any]]:
    return {
        path.stem: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted((folder / "students").glob("*.json"))
    }


@pytest.fixture(scope="module")
def graded(image: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The class graded in containers: two shards and their merge, and all at once."""
    root = tmp_path_factory.mktemp("container")
    root.chmod(0o755)
    klass, out = root / "class", root / "out"
    klass.mkdir()
    out.mkdir()
    for student, example in CLASS.items():
        make_submission(klass, example).rename(klass / student)
    (klass / EMPTY).mkdir()
    roster = "".join(f"{name},{number},{name.title()}\n" for number, name in enumerate(STUDENTS))
    (klass / "roster.csv").write_text(f"submission,id,name\n{roster}", encoding="utf-8")
    klass.chmod(0o700)  # as docs/deploy.md advises: the runs' users cannot read a classmate's
    folders = [str(klass / student) for student in STUDENTS]
    assert grader.cli.main(["manifest", *folders, "-o", str(klass / "manifest.json")]) == 0
    volumes = {"class": klass, "out": out}
    done = {}
    for index in range(2):
        env = {"SHARDS": "2", "JOB_COMPLETION_INDEX": str(index)}
        done[f"shard-{index}"] = run_pod(image, "grade-class-job.yaml", volumes, env)
    done["merge"] = run_pod(image, "merge-job.yaml", volumes, {})  # what it mounts of them
    whole = unsharded("grade-class-job.yaml", "/out/whole")
    done["whole"] = run_pod(image, "grade-class-job.yaml", volumes, {}, args=whole)
    for name, run in done.items():
        assert run.returncode == 0, f"{name}: {run.stdout[-2000:]}{run.stderr[-2000:]}"
    return {"root": root, "class": klass, "out": out, "done": done}


@pytest.mark.slow
def test_the_image_holds_the_kit_at_the_releases_pinned_versions(image: str) -> None:
    """Every dependency at the version ``constraints.txt`` pins (those installed here, where
    ``grader release`` ran), the wheelhouse gone, and the grader runs with no network."""
    done = podman("run", "--rm", *RUNTIME, "--network", "none", image)
    assert (done.returncode, done.stdout.strip()) == (0, f"grader {version('ds07-grader')}")
    freeze = ["/kit/bin/python", "-m", "pip", "freeze", "--disable-pip-version-check"]
    listed = podman("run", "--rm", *RUNTIME, "--network", "none", image, *freeze)
    assert listed.returncode == 0, listed.stderr
    installed: dict[str, str] = {}
    for line in listed.stdout.splitlines():
        name, _, pinned = line.partition("==")
        installed[canonicalize_name(name)] = pinned
    assert installed.pop("ds07-grader") == version("ds07-grader")
    pins = dict(line.split("==") for line in pinned_dependencies())
    assert installed == pins
    assert podman("run", "--rm", *RUNTIME, image, "test", "-e", "/tmp/wheelhouse").returncode == 1
    # No account, and so no file of the image, has an id runs may draw in a user namespace.
    narrow = f"$3 >= {NARROW_RUN_IDS.start} && $3 < {NARROW_RUN_IDS.stop}"
    accounts = ["awk", "-F:", f"{narrow} {{print}}", "/etc/passwd", "/etc/group"]
    found = podman("run", "--rm", *RUNTIME, image, *accounts)
    assert (found.returncode, found.stdout) == (0, "")


@pytest.mark.slow
def test_two_shards_in_pods_merge_into_the_class_graded_at_once(graded: dict[str, Any]) -> None:
    out = graded["out"]
    merged, whole = out / "class", out / "whole"
    assert sorted(rows(merged)) == STUDENTS
    assert rows(merged) == rows(whole)
    assert (merged / "canvas.csv").is_file()  # the merge pod's roster, as its manifest sets it
    merged_reports, whole_reports = reports(merged), reports(whole)
    assert sorted(merged_reports) == STUDENTS
    for student, report in merged_reports.items():
        assert stable_part(report) == stable_part(whole_reports[student]), student
    verdicts = {student: row["verdict"] for student, row in rows(merged).items()}
    assert verdicts["amy"] == "pass" and verdicts["gil"] == "fail"


@pytest.mark.slow
def test_the_pods_grade_at_uid_without_privilege(graded: dict[str, Any]) -> None:
    out = graded["out"]
    for folder in (out / "shard-0", out / "shard-1", out / "class", out / "whole"):
        found = {report["isolation"] for report in reports(folder).values()}
        assert found == {"uid"}, folder
    (grade,) = pod_of("grade-class-job.yaml")["containers"]
    assert "--privileged" not in security_flags({}, grade)
    assert grade["volumeMounts"][0] == {"name": "class", "mountPath": "/class", "readOnly": True}


def mapped(root: Path, name: str, copy_of: Path | None = None) -> Path:
    """A folder (empty, or a copy of ``copy_of``) the pod's root owns under the uid map:
    Kubernetes mounts a user-namespaced pod's volumes id-mapped, podman here does not."""
    folder = root / name
    if copy_of is None:
        folder.mkdir()
    else:
        shutil.copytree(copy_of, folder)
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, MAPPED_ROOT, MAPPED_ROOT, follow_symlinks=False)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize(
    ("manifest", "isolation"),
    [("grade-class-job.yaml", "uid"), ("grade-class-job-userns.yaml", "namespaces")],
)
def test_a_uid_mapped_pod_grades_its_shard(
    image: str, graded: dict[str, Any], manifest: str, isolation: str
) -> None:
    """Run ids are drawn inside the map: the baseline pod gets ``uid`` there, and the
    user-namespaced pod, SYS_ADMIN in its own namespace, ``namespaces``."""
    out = mapped(graded["root"], f"out-{isolation}")
    volumes = {"class": mapped(graded["root"], f"class-{isolation}", graded["class"]), "out": out}
    env = {"SHARDS": "2", "JOB_COMPLETION_INDEX": "0"}
    extra = ("--uidmap", RUN_ID_MAP, "--gidmap", RUN_ID_MAP) if isolation == "uid" else ()
    done = run_pod(image, manifest, volumes, env, extra=extra)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    shard, whole = reports(out / "shard-0"), reports(graded["out"] / "whole")
    assert shard and {report["isolation"] for report in shard.values()} == {isolation}
    for student, report in shard.items():
        before = whole[student]
        assert (report["verdict"], report["grade"]) == (before["verdict"], before["grade"])


@pytest.mark.slow
def test_a_map_too_small_for_the_run_ids_stops_with_exit_2_saying_why(
    image: str, graded: dict[str, Any]
) -> None:
    """60500 ids from 0: 500 of the narrow band, too few to draw runs from (nor is
    ``nobody`` mapped, so the level probe finds no level: the reason given is the map)."""
    small = ("--uidmap", "0:200000:60500", "--gidmap", "0:200000:60500")
    out = mapped(graded["root"], "out-small")
    volumes = {"class": mapped(graded["root"], "class-small", graded["class"]), "out": out}
    env = {"SHARDS": "2", "JOB_COMPLETION_INDEX": "0"}
    done = run_pod(image, "grade-class-job.yaml", volumes, env, extra=small)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "maps only 500 of the ids" in done.stderr and "broken" not in done.stderr
    assert not (out / "shard-0" / "gradebook.csv").exists()


# ----------------------------------------------------------------------
# The scripts beside the manifests


def test_the_scripts_pass_shellcheck() -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("no shellcheck installed (Debian: apt-get install shellcheck)")
    done = subprocess.run(
        ["shellcheck", str(BUILD), str(WAIT)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout


KUBECTL = """#!/bin/sh
# kubectl wait, standing in: the condition named in $ENDS ends at once, any other waits.
echo "$@" >> "$CALLS"
case "$2" in
    --for=condition=$ENDS) exit "$CODE" ;;
esac
exec sleep 60
"""


@pytest.mark.parametrize(
    ("ends", "code", "expected"),
    [("complete", 0, 0), ("failed", 0, 1), ("complete", 1, 2)],
)
def test_the_wait_ends_on_failed_as_on_complete(
    tmp_path: Path, ends: str, code: int, expected: int
) -> None:
    """``kubectl wait --for=condition=complete`` alone waits out its timeout when an index
    fails; the script ends when either condition is met (or kubectl gives up: exit 2)."""
    stand_in = tmp_path / "bin" / "kubectl"
    stand_in.parent.mkdir()
    stand_in.write_text(KUBECTL, encoding="utf-8")
    stand_in.chmod(0o755)
    env = {
        "PATH": f"{stand_in.parent}:/usr/bin:/bin",
        "ENDS": ends,
        "CODE": str(code),
        "CALLS": str(tmp_path / "calls"),
    }
    done = subprocess.run(
        [str(WAIT), "grade-ds07", "5m"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        check=False,
    )
    assert done.returncode == expected, done.stdout + done.stderr
    calls = sorted((tmp_path / "calls").read_text(encoding="utf-8").splitlines())
    assert calls == [
        f"wait --for=condition={condition} job/grade-ds07 --timeout=5m"
        for condition in ("complete", "failed")
    ]


PROBE = """
import os, signal, tempfile
from pathlib import Path
from grader.sandbox.confine import contain, folders, policy, probe, user
level = probe.isolation_level()
folder = Path(tempfile.mkdtemp(dir="/tmp"))
confinement = policy.Confinement(level, (), user.new_identity(level))
folders.hand_over([folder], confinement)
pid = contain.fork_confined(confinement, folder)
if pid == 0:
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    found = [level, str(os.getuid()), status["CapEff"].strip(), status["CapPrm"].strip()]
    for target in (1, os.getppid()):
        try:
            os.kill(target, signal.SIGSTOP)
            found.append("stopped")
        except PermissionError:
            found.append("refused")
    try:
        open("/class/manifest.json").read()
        found.append("read-the-class")
    except PermissionError:
        found.append("class-refused")
    import grader
    try:
        os.listdir(grader.__path__[0])
        found.append("listed-the-kit")
    except PermissionError:
        found.append("kit-refused")
    print(" ".join(found), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
"""


@pytest.mark.slow
@pytest.mark.parametrize("uid_map", [False, True], ids=["host-ids", "uid-map"])
def test_a_run_in_the_pod_holds_no_capability_and_cannot_stop_the_grader(
    image: str, tmp_path: Path, uid_map: bool
) -> None:
    """A hostile run in the baseline pod: the grader is the container's PID 1, root with six
    capabilities; the run's process, under a run id, keeps none of them, and can neither stop
    the grader nor its parent, nor read the class (mode 700) or the kit (the image's)."""
    tmp_path.chmod(0o755)
    klass = tmp_path / "class"
    klass.mkdir(mode=0o700)
    (klass / "manifest.json").write_text("{}", encoding="utf-8")
    if uid_map:
        klass = mapped(tmp_path, "class-mapped", klass)
    (grade,) = pod_of("grade-class-job.yaml")["containers"]
    pod = {"hostUsers": False} if uid_map else {}  # the baseline pod on a user-namespaced node
    flags = ["run", "--rm", *RUNTIME, "--network", "none", *security_flags(pod, grade)]
    flags += ["--volume", f"{klass}:/class:ro", image, "python", "-c", PROBE]
    probe = podman(*flags)
    assert probe.returncode == 0, probe.stderr
    level, uid, effective, permitted, *tries = probe.stdout.split()
    ids = NARROW_RUN_IDS if uid_map else RUN_IDS
    assert level == "uid" and int(uid) in ids
    assert (effective, permitted) == ("0000000000000000", "0000000000000000")
    assert tries == ["refused", "refused", "class-refused", "kit-refused"]
