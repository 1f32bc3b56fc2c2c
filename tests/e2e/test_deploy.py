"""The deployments that grade a class in shards: a Kubernetes Indexed Job, a GitHub matrix.

Kubernetes: every manifest under ``deploy/kubernetes/`` is held to the
Kubernetes API's own JSON Schema for a fixed release, in strict mode (an
unknown or misspelt key fails), by ``kubernetes-validate`` (PyPI: it ships the
schemas, so nothing is fetched); then to the kit's rules: one shard per index,
the shard count equal to ``completions``, exit codes 1 and 2 never retried.

GitHub: ``deploy/github/grade-class.yml`` is held to GitHub's workflow schema
and linted by actionlint, as ``deploy/github/grade.yml`` is; its grade step's
retry loop then runs here against a stand-in grader that exits with the codes
a test chooses.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from test_autograder import actionlint

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

KIT = Path(__file__).resolve().parents[2]
KUBERNETES = KIT / "deploy" / "kubernetes"
WORKFLOW = KIT / "deploy" / "github" / "grade-class.yml"
KUBERNETES_VERSION = "1.31.0"
"""The oldest release whose Job has every field used here as stable or beta."""
GRADE_STEP = "Grade the shard"


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


def test_the_indexed_job_grades_one_shard_per_index() -> None:
    spec = job("grade-class-job.yaml")["spec"]
    assert spec["completionMode"] == "Indexed" and spec["backoffLimitPerIndex"] >= 1
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"  # podFailurePolicy needs it
    (grade,) = pod["containers"]
    command = " ".join(grade["args"])
    assert '--shard "$JOB_COMPLETION_INDEX/$SHARDS"' in command
    assert '--out "/out/shard-$JOB_COMPLETION_INDEX"' in command
    assert "--manifest /class/manifest.json" in command and "--isolation namespaces" in command
    shards = {e["name"]: e["value"] for e in grade["env"]}["SHARDS"]
    assert int(shards) == spec["completions"]
    assert grade["securityContext"] == {"privileged": True, "runAsUser": 0}


@pytest.mark.parametrize(
    ("name", "container", "stop"),
    [("grade-class-job.yaml", "grade", "FailIndex"), ("merge-job.yaml", "merge", "FailJob")],
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


def test_the_merge_job_merges_every_shard() -> None:
    (merge,) = job("merge-job.yaml")["spec"]["template"]["spec"]["containers"]
    assert merge["args"] == ["exec /kit/bin/grader merge /out/class /out/shard-*"]


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
