"""The deployments that grade a class in shards: a Kubernetes Indexed Job, a GitHub matrix.

Kubernetes: every manifest under ``deploy/kubernetes/`` is held to the
Kubernetes API's own JSON Schema for a fixed release, in strict mode (an
unknown or misspelt key fails), by ``kubernetes-validate`` (PyPI: it ships the
schemas, so nothing is fetched); then to the kit's rules: one shard per index,
the shard count equal to ``completions``, exit codes 1 and 2 never retried,
the kit's image and no install at start, and Pod Security ``baseline`` (the
user-namespaced Job's two named exceptions aside). ``test_container.py`` runs
the pods' containers with podman.

GitHub: ``deploy/github/grade-class.yml`` is held to GitHub's workflow schema
and linted by actionlint, as ``deploy/github/grade.yml`` is; its grade step's
retry loop then runs here against a stand-in grader that exits with the codes
a test chooses, the step before the upload hands a shard that a real
``grader batch`` wrote as root to the runner's user, and the merge passes the
roster it is given. The Kubernetes merge Job's shell runs here too.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from conftest import make_submission
from test_autograder import actionlint

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

KIT = Path(__file__).resolve().parents[2]
KUBERNETES = KIT / "deploy" / "kubernetes"
WORKFLOW = KIT / "deploy" / "github" / "grade-class.yml"
KUBERNETES_VERSION = "1.31.0"
"""The oldest release whose Job has every field used here as stable or beta."""
GRADE_STEP = "Grade the shard"
GRADE_JOBS = ("grade-class-job.yaml", "grade-class-job-userns.yaml")
IMAGE = "registry.example.invalid/YOUR-COURSE/ds07-grader:0.1.0"
"""The staff edition's image every manifest runs (``deploy/container/``)."""


def documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def job(name: str) -> dict[str, Any]:
    (found,) = documents(KUBERNETES / name)
    return found


@pytest.mark.parametrize("path", sorted(KUBERNETES.glob("*.yaml")), ids=lambda p: p.name)
def test_each_manifest_follows_the_kubernetes_schema(path: Path) -> None:
    for document in documents(path):
        kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)


def test_the_schema_check_catches_a_misspelt_key() -> None:
    broken = job("grade-class-job.yaml")
    broken["spec"]["backoffLimitPerIndx"] = broken["spec"].pop("backoffLimitPerIndex")
    with pytest.raises(kubernetes_validate.ValidationError, match="backoffLimitPerIndx"):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)


def test_kubernetes_1_28_refuses_the_job_and_1_29_takes_it() -> None:
    """docs/deploy.md says 1.29 or later: 1.28 requires ``onPodConditions`` in every rule of
    a ``podFailurePolicy`` (and has ``backoffLimitPerIndex`` only as an alpha, off). The
    user-namespaced Job needs 1.30 (``hostUsers`` in beta; ``appArmorProfile``)."""
    plain, userns = (job(name) for name in GRADE_JOBS)
    with pytest.raises(kubernetes_validate.ValidationError, match="onPodConditions"):
        kubernetes_validate.validate(plain, "1.28.0", strict=True)
    kubernetes_validate.validate(plain, "1.29.0", strict=True)
    with pytest.raises(kubernetes_validate.ValidationError, match="appArmorProfile"):
        kubernetes_validate.validate(userns, "1.29.0", strict=True)
    kubernetes_validate.validate(userns, "1.30.0", strict=True)


@pytest.mark.parametrize(
    ("name", "isolation"),
    [("grade-class-job.yaml", "required"), ("grade-class-job-userns.yaml", "namespaces")],
)
def test_the_indexed_job_grades_one_shard_per_index(name: str, isolation: str) -> None:
    spec = job(name)["spec"]
    assert spec["completionMode"] == "Indexed" and spec["backoffLimitPerIndex"] >= 1
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"  # podFailurePolicy needs it
    (grade,) = pod["containers"]
    command = " ".join(grade["args"])
    assert '--shard "$JOB_COMPLETION_INDEX/$SHARDS"' in command
    assert '--out "/out/shard-$JOB_COMPLETION_INDEX"' in command
    assert "--manifest /class/manifest.json" in command
    assert f"--isolation {isolation}" in command
    shards = {e["name"]: e["value"] for e in grade["env"]}["SHARDS"]
    assert int(shards) == spec["completions"]


def test_the_two_grade_jobs_differ_only_in_the_pod_they_ask_for() -> None:
    plain, userns = job("grade-class-job.yaml"), job("grade-class-job-userns.yaml")
    plain_pod, userns_pod = plain["spec"].pop("template"), userns["spec"].pop("template")
    assert plain == userns
    assert userns_pod["spec"].pop("hostUsers") is False
    (plain_grade,), (userns_grade,) = (
        plain_pod["spec"]["containers"],
        userns_pod["spec"]["containers"],
    )
    for grade in (plain_grade, userns_grade):
        grade.pop("securityContext")
        grade["args"] = [" ".join(grade["args"]).rsplit("--isolation", 1)[0]]
    assert plain_pod == userns_pod


@pytest.mark.parametrize("name", sorted(p.name for p in KUBERNETES.glob("*.yaml")))
def test_every_pod_runs_the_kits_image_and_installs_nothing(name: str) -> None:
    pod = job(name)["spec"]["template"]["spec"]
    assert "initContainers" not in pod
    (container,) = pod["containers"]
    assert container["image"] == IMAGE
    assert all("pip" not in part for part in [*container["command"], *container["args"]])
    assert not any("emptyDir" in volume for volume in pod["volumes"])


# Pod Security Standards, level `baseline` (kubernetes.io/docs/concepts/security/
# pod-security-standards): what a pod of that level may not ask for.
BASELINE_CAPABILITIES = {
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}  # fmt: skip
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes",
}  # fmt: skip


def baseline_violations(pod: dict[str, Any]) -> list[str]:
    """What in the pod spec ``pod`` the Pod Security ``baseline`` level refuses."""
    found = [f"{key}: true" for key in ("hostNetwork", "hostPID", "hostIPC") if pod.get(key)]
    found += [f"hostPath volume {v['name']}" for v in pod.get("volumes", []) if "hostPath" in v]
    contexts = [("pod", pod.get("securityContext", {}))]
    for container in [*pod.get("initContainers", []), *pod["containers"]]:
        context = container.get("securityContext", {})
        contexts.append((container["name"], context))
        if context.get("privileged"):
            found.append(f"{container['name']}: privileged")
        for capability in context.get("capabilities", {}).get("add", []):
            if capability not in BASELINE_CAPABILITIES:
                found.append(f"{container['name']}: capability {capability}")
        if context.get("procMount", "Default") != "Default":
            found.append(f"{container['name']}: procMount {context['procMount']}")
        if any("hostPort" in port for port in container.get("ports", [])):
            found.append(f"{container['name']}: hostPort")
    for where, context in contexts:
        for profile in ("seccompProfile", "appArmorProfile"):
            if context.get(profile, {}).get("type") == "Unconfined":
                found.append(f"{where}: {profile} Unconfined")
        if context.get("windowsOptions", {}).get("hostProcess"):
            found.append(f"{where}: hostProcess")
        selinux = context.get("seLinuxOptions", {})
        if selinux.get("user") or selinux.get("role"):
            found.append(f"{where}: seLinuxOptions user or role")
        if selinux.get("type", "container_t") not in ("container_t", "container_init_t"):
            found.append(f"{where}: seLinuxOptions type {selinux['type']}")
    for sysctl in pod.get("securityContext", {}).get("sysctls", []):
        if sysctl["name"] not in SAFE_SYSCTLS:
            found.append(f"sysctl {sysctl['name']}")
    return found


@pytest.mark.parametrize("name", ["grade-class-job.yaml", "merge-job.yaml"])
def test_the_pods_pass_pod_security_baseline(name: str) -> None:
    pod = job(name)["spec"]["template"]["spec"]
    assert baseline_violations(pod) == []
    assert pod.get("hostUsers", True) is True  # runs where user namespaces are not offered


def test_the_baseline_check_catches_what_baseline_refuses() -> None:
    pod = job("grade-class-job.yaml")["spec"]["template"]["spec"]
    (grade,) = pod["containers"]
    grade["securityContext"].update(privileged=True, procMount="Unmasked")
    grade["securityContext"]["capabilities"]["add"].append("SYS_PTRACE")
    grade["securityContext"]["seccompProfile"] = {"type": "Unconfined"}
    pod["hostPID"] = True
    pod["volumes"].append({"name": "docker", "hostPath": {"path": "/var/run/docker.sock"}})
    assert baseline_violations(pod) == [
        "hostPID: true",
        "hostPath volume docker",
        "grade: privileged",
        "grade: capability SYS_PTRACE",
        "grade: procMount Unmasked",
        "grade: seccompProfile Unconfined",
    ]


def test_the_grade_pod_has_the_sandboxs_capabilities_and_no_other() -> None:
    """``uid``: runs take their own uids (SETUID, SETGID), their folders are handed to them
    (CHOWN, FOWNER), read and removed (DAC_OVERRIDE), their processes killed (KILL).
    tests/e2e/test_container.py grades with exactly these and nothing privileged."""
    (grade,) = job("grade-class-job.yaml")["spec"]["template"]["spec"]["containers"]
    context = grade["securityContext"]
    assert context["privileged"] is False and context["allowPrivilegeEscalation"] is False
    assert context["runAsUser"] == 0
    assert context["capabilities"] == {
        "drop": ["ALL"],
        "add": ["CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETGID", "SETUID"],
    }
    (merge,) = job("merge-job.yaml")["spec"]["template"]["spec"]["containers"]
    assert merge["securityContext"] == context  # copy detection runs trees in the sandbox


def test_the_user_namespaced_pod_adds_sys_admin_in_its_own_namespace_only() -> None:
    """Outside ``baseline`` by name (SYS_ADMIN, and AppArmor off for mount), never by the
    host: no privileged, no host namespace, no host path, and a user namespace of its own."""
    pod = job("grade-class-job-userns.yaml")["spec"]["template"]["spec"]
    assert pod["hostUsers"] is False
    assert baseline_violations(pod) == [
        "grade: capability SYS_ADMIN",
        "grade: appArmorProfile Unconfined",
    ]


@pytest.mark.parametrize(
    ("name", "container", "stop"),
    [
        ("grade-class-job.yaml", "grade", "FailIndex"),
        ("grade-class-job-userns.yaml", "grade", "FailIndex"),
        ("merge-job.yaml", "merge", "FailJob"),
    ],
)
def test_exit_codes_are_the_retry_policy(name: str, container: str, stop: str) -> None:
    """1 and 2 stop at once (results, or a broken kit); any other failure is counted and
    retried; an eviction is retried without counting."""
    rules = job(name)["spec"]["podFailurePolicy"]["rules"]
    by_code = [r for r in rules if "onExitCodes" in r]
    assert by_code == [
        {
            "action": stop,
            "onExitCodes": {"containerName": container, "operator": "In", "values": [1, 2]},
        }
    ]
    evicted = [r for r in rules if "onPodConditions" in r]
    assert evicted == [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}
    ]


@pytest.mark.parametrize(
    ("roster", "assignment", "expected"),
    [
        (
            "/class/roster.csv",
            "",
            "merge --roster /class/roster.csv --canvas /out/class/canvas.csv /out/class "
            "/out/shard-0 /out/shard-1",
        ),
        (
            "/class/r.csv",
            "Radix tree (12)",
            "merge --roster /class/r.csv --canvas /out/class/canvas.csv --canvas-assignment "
            "Radix tree (12) /out/class /out/shard-0 /out/shard-1",
        ),
        ("", "", "merge /out/class /out/shard-0 /out/shard-1"),
    ],
)
def test_the_merge_job_merges_every_shard_with_the_roster(
    tmp_path: Path, roster: str, assignment: str, expected: str
) -> None:
    """The merge container's shell, run here with a stand-in grader at /kit/bin/grader's
    place: every shard, and the roster and Canvas file unless ROSTER is empty."""
    spec = job("merge-job.yaml")["spec"]["template"]["spec"]
    (merge,) = spec["containers"]
    env = {e["name"]: e["value"] for e in merge["env"]}
    assert env == {"ROSTER": "/class/roster.csv", "CANVAS_ASSIGNMENT": ""}
    mounts = {m["name"]: m for m in merge["volumeMounts"]}
    assert mounts["class"] == {"name": "class", "mountPath": "/class", "readOnly": True}
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["class"]["persistentVolumeClaim"]["readOnly"] is True
    (script,) = merge["args"]
    for k in (0, 1):
        (tmp_path / "out" / f"shard-{k}").mkdir(parents=True)
    calls = tmp_path / "calls"
    grader = tmp_path / "grader"
    grader.write_text(f'#!/bin/sh\necho "$*" > {calls}\n', encoding="utf-8")
    grader.chmod(0o755)
    script = script.replace("/kit/bin/grader", str(grader)).replace(
        "/out/shard-", f"{tmp_path}/out/shard-"
    )
    done = subprocess.run(
        [*merge["command"], script],
        env={"PATH": "/usr/bin:/bin", "ROSTER": roster, "CANVAS_ASSIGNMENT": assignment},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert calls.read_text(encoding="utf-8").strip() == expected.replace(
        "/out/shard-", f"{tmp_path}/out/shard-"
    )


# ----------------------------------------------------------------------
# GitHub Actions


def workflow() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return loaded


def test_the_class_workflow_follows_githubs_schema() -> None:
    for schema in ("vendor.github-workflows", "custom.github-workflows-require-timeout"):
        done = subprocess.run(
            [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(WORKFLOW)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_finds_no_problem_in_the_class_workflow() -> None:
    assert actionlint(WORKFLOW) == []


def test_a_matrix_of_shards_then_one_merge() -> None:
    jobs = workflow()["jobs"]
    grade, merge = jobs["grade"], jobs["merge"]
    assert grade["strategy"]["fail-fast"] is False
    shards = grade["strategy"]["matrix"]["shard"]
    assert shards == list(range(len(shards)))  # K counts from 0, N is the matrix's size
    steps = {step["name"]: step for step in grade["steps"]}
    assert steps[GRADE_STEP]["env"] == {
        "SHARD": "${{ matrix.shard }}",
        "SHARDS": "${{ strategy.job-total }}",
    }
    assert steps["Upload the shard"]["with"]["name"] == "shard-${{ matrix.shard }}"
    assert merge["needs"] == "grade" and merge["if"] == "always()"
    merged = {step["name"]: step for step in merge["steps"]}
    assert merged["Download the shards"]["with"]["pattern"] == "shard-*"
    assert 'grader" merge' in merged["Merge"]["run"]
    assert merged["Upload the gradebook"]["if"] == "always()"
    assert workflow()["permissions"] == {"contents": "read"}


STAND_IN = """#!/bin/sh
# sudo and grader at once: each call takes the next exit code from the list in $CODES.
echo "$@" >> "$CALLS"
set -- $(cat "$CODES")
code=$1; shift; echo "$@" > "$CODES"
exit "$code"
"""


@pytest.mark.parametrize(
    ("codes", "calls", "step_code"),
    [
        ("0", 1, 0),
        ("1", 1, 0),  # a result: never graded again
        ("2", 1, 2),  # a broken kit: the shard fails at once
        ("137 0", 2, 0),  # killed (out of memory): graded again
        ("143 143 143", 3, 143),  # three stops: the shard fails with the last code
    ],
)
def test_the_grade_step_retries_by_exit_code(
    tmp_path: Path, codes: str, calls: int, step_code: int
) -> None:
    steps = {step["name"]: step for step in workflow()["jobs"]["grade"]["steps"]}
    script = steps[GRADE_STEP]["run"]
    stand_in = tmp_path / "bin" / "sudo"
    stand_in.parent.mkdir()
    stand_in.write_text(STAND_IN, encoding="utf-8")
    stand_in.chmod(0o755)
    (tmp_path / "codes").write_text(codes, encoding="utf-8")
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        env={
            "PATH": f"{stand_in.parent}:/usr/bin:/bin",
            "CODES": str(tmp_path / "codes"),
            "CALLS": str(tmp_path / "calls"),
            "RUNNER_TEMP": str(tmp_path),
            "CLASS_DIR": "class",
            "SHARD": "1",
            "SHARDS": "4",
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    made = (tmp_path / "calls").read_text(encoding="utf-8").splitlines()
    assert (done.returncode, len(made)) == (step_code, calls), done.stdout + done.stderr
    assert made[0].endswith("--shard 1/4 --out " + f"{tmp_path}/shard --isolation required")


def merge_call(tmp_path: Path, roster: str, assignment: str) -> str:
    """The arguments the merge job's Merge step gives grader (a stand-in here)."""
    steps = {step["name"]: step for step in workflow()["jobs"]["merge"]["steps"]}
    merge = steps["Merge"]
    assert merge["env"] == {
        "ROSTER": "${{ inputs.roster }}",
        "ASSIGNMENT": "${{ inputs.canvas-assignment }}",
    }
    grader = tmp_path / "kit" / "bin" / "grader"
    grader.parent.mkdir(parents=True)
    grader.write_text(f'#!/bin/sh\necho "$*" > {tmp_path}/calls\n', encoding="utf-8")
    grader.chmod(0o755)
    for k in (0, 1):
        (tmp_path / "shards" / f"shard-{k}").mkdir(parents=True)
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", merge["run"]],
        env={
            "PATH": "/usr/bin:/bin",
            "RUNNER_TEMP": str(tmp_path),
            "ROSTER": roster,
            "ASSIGNMENT": assignment,
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return (tmp_path / "calls").read_text(encoding="utf-8").strip().replace(str(tmp_path), "T")


def test_the_workflow_merges_with_the_roster_it_is_given(tmp_path: Path) -> None:
    triggers: dict[Any, Any] = workflow()
    inputs = triggers[True]["workflow_dispatch"]["inputs"]  # yaml reads `on:` as True
    assert inputs["roster"]["default"] == "" and inputs["roster"]["required"] is False
    with_roster = merge_call(tmp_path / "a", "class/roster.csv", "Radix tree (12)")
    assert with_roster == (
        "merge --roster class/roster.csv --canvas T/gradebook/canvas.csv --canvas-assignment "
        "Radix tree (12) T/gradebook T/shards/shard-0 T/shards/shard-1"
    )
    assert (
        merge_call(tmp_path / "b", "", "") == "merge T/gradebook T/shards/shard-0 T/shards/shard-1"
    )


NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
SUDO = '#!/bin/sh\nexec "$@"\n'  # the test runs as root: sudo is the command itself


def as_nobody(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*NOBODY, *command], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.skipif(
    os.geteuid() != 0, reason="grader batch as root, as the workflow's sudo runs it, needs root"
)
def test_the_shard_a_root_batch_wrote_is_handed_to_the_runner_user() -> None:
    """A real ``grader batch`` as root writes the shard (root's files, mode 600), then the
    step before upload-artifact runs: the runner's user (``nobody`` here, the owner of the
    workspace) can read every file of it, as upload-artifact must."""
    base = Path(tempfile.mkdtemp(prefix="runner-"))  # mode 700: a run at uid reaches none
    try:
        temp, workspace, kit_class = base / "temp", base / "workspace", base / "class"
        for folder in (temp, workspace, kit_class):
            folder.mkdir()
        nobody = pwd.getpwnam("nobody")
        os.chown(workspace, nobody.pw_uid, nobody.pw_gid)
        make_submission(kit_class, "missing_test_file").rename(kit_class / "ann")
        for where in ("a", "b"):  # two radix.py: refused, a row with no report
            (kit_class / "bob").mkdir(exist_ok=True)
            make_submission(kit_class / "bob", "missing_test_file").rename(
                kit_class / "bob" / where
            )
        shard = temp / "shard"
        folders = [str(kit_class / "ann"), str(kit_class / "bob")]
        graded = subprocess.run(
            [sys.executable, "-m", "grader", "batch", *folders, "--out", str(shard),
             "--isolation", "required"],
            cwd=KIT, capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        assert graded.returncode == 0, graded.stderr
        base.chmod(0o755)  # now nobody may reach the runner's folders, as on a runner
        files = sorted(path for path in shard.rglob("*") if path.is_file())
        assert shard / "gradebook.csv" in files and shard / "students" / "ann.json" in files
        assert (
            as_nobody("cat", str(shard / "gradebook.csv")).returncode != 0
        )  # root's, as on a runner
        steps = {step["name"]: step for step in workflow()["jobs"]["grade"]["steps"]}
        names = list(steps)
        step = steps["Hand the shard to the runner user"]
        assert names.index(GRADE_STEP) < names.index(step["name"]) < names.index("Upload the shard")
        assert step["if"] == "always()"  # a failed grade's rows are uploaded too
        sudo = base / "bin" / "sudo"
        sudo.parent.mkdir()
        sudo.write_text(SUDO, encoding="utf-8")
        sudo.chmod(0o755)
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            env={
                "PATH": f"{sudo.parent}:/usr/bin:/bin",
                "RUNNER_TEMP": str(temp),
                "GITHUB_WORKSPACE": str(workspace),
            },
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        read = as_nobody("cat", *map(str, files))
        assert read.returncode == 0, read.stderr
        listed = as_nobody("find", str(shard), "-type", "f")
        assert sorted(listed.stdout.split()) == sorted(map(str, files))
    finally:
        shutil.rmtree(base)
