#!/usr/bin/env python3
"""Run the GitHub Actions workflow that docs/guide/ci.md shows, on this machine (called by
.ci/readme-workflow).

The workflow is the one ```yaml block between <!-- workflow:begin --> and <!-- workflow:end --> in
docs/guide/ci.md (the README links it). Nothing about its steps is written here: each job runs
once per matrix value, its steps in order, in a fresh temporary workspace, with the actions it
uses emulated as follows:

  actions/checkout        copies the repository's files (those git would commit: tracked, and
                          untracked but not ignored, as they are in the work tree) into the
                          workspace, keeping their modification times
  dtolnay/rust-toolchain  checks that cargo and rustc run (the local toolchain is used)
  actions/setup-python    creates a fresh venv with this python3 and puts it first on PATH
  actions/upload-artifact checks that each path exists and is not empty, and that an .xml
                          file parses as XML
  run:                    bash --noprofile --norc -eo pipefail, as GitHub's runner does

`${{ matrix.KEY }}` is substituted; any other expression, an unknown action or an unknown key is
an error rather than something silently skipped. The first failing step ends the run with a
non-zero status. Nothing global changes: `cargo install` goes to a temporary root (on PATH), and
CARGO_TARGET_DIR is this checkout's target/, so it reuses the release build there.
"""

import argparse
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The page that shows the workflow, relative to the repository.
PAGE = "docs/guide/ci.md"
BEGIN, END = "<!-- workflow:begin -->", "<!-- workflow:end -->"
# Only to parse the workflow, in a venv of its own so that the workflow's venv stays as fresh as
# setup-python's.
PYYAML = "PyYAML==6.0.3"
JOB_KEYS = {"name", "runs-on", "strategy", "steps", "env"}
STEP_KEYS = {"name", "id", "uses", "run", "with", "if", "env", "shell", "working-directory"}
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class Failure(Exception):
    """Ends the run: the message says which step, or what in the page, is wrong."""


def say(message):
    print(f"readme-workflow: {message}", flush=True)


def extract_workflow(page):
    try:
        start = page.index(BEGIN) + len(BEGIN)
        end = page.index(END, start)
    except ValueError:
        raise Failure(f"{PAGE} has no {BEGIN} ... {END} section") from None
    blocks = re.findall(r"^```ya?ml\n(.*?)^```", page[start:end], re.S | re.M)
    if len(blocks) != 1:
        raise Failure(f"expected one ```yaml block between the markers, found {len(blocks)}")
    return blocks[0]


def make_venv(path, packages=()):
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    if packages:
        pip = [str(path / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, "--disable-pip-version-check", *packages], check=True)


def parse_yaml(text, python):
    result = subprocess.run(
        [python, "-c", "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)"],
        input=text,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise Failure(f"the workflow is not valid YAML:\n{result.stderr}")
    return json.loads(result.stdout)


def matrix_values(job_id, job):
    """Every combination of the matrix's lists, in order; one empty one without a matrix."""
    matrix = (job.get("strategy") or {}).get("matrix") or {}
    if not isinstance(matrix, dict) or "include" in matrix or "exclude" in matrix:
        raise Failure(f"job {job_id}: only a matrix of plain lists is supported")
    for key, values in matrix.items():
        if not isinstance(values, list):
            raise Failure(f"job {job_id}: matrix.{key} is not a list")
    keys = list(matrix)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(matrix[k] for k in keys))]


def substitute(value, matrix):
    def one(m):
        found = re.fullmatch(r"matrix\.([A-Za-z_][\w-]*)", m.group(1))
        if not found or found.group(1) not in matrix:
            raise Failure(f"unsupported expression {m.group(0)}")
        return str(matrix[found.group(1)])

    return EXPRESSION.sub(one, str(value))


def copy_checkout(dest):
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout
    count = 0
    for raw in listed.split(b"\0"):
        if not raw:
            continue
        rel = os.fsdecode(raw)
        src, dst = REPO / rel, dest / rel
        if not os.path.lexists(src):  # deleted in the work tree, not committed yet
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir() and not src.is_symlink():  # a submodule
            shutil.copytree(src, dst, symlinks=True, dirs_exist_ok=True)
        else:
            # copy2 keeps the modification time: cargo then sees target/'s build as fresh.
            shutil.copy2(src, dst, follow_symlinks=False)
        count += 1
    return count


class JobRun:
    """One job for one matrix value: its workspace and the environment its steps see."""

    def __init__(self, tmp, matrix, job_env):
        self.tmp = tmp
        self.matrix = matrix
        self.workspace = tmp / "workspace"
        self.workspace.mkdir()
        cargo_root = tmp / "cargo-root"
        self.env = dict(os.environ)
        self.env.update(
            CI="true",
            GITHUB_WORKSPACE=str(self.workspace),
            GITHUB_STEP_SUMMARY=str(tmp / "step-summary.md"),
            RUNNER_TEMP=str(tmp),
            # `cargo install` writes here instead of ~/.cargo, and builds in this checkout's
            # target/ instead of the workspace's empty one, reusing the release build.
            CARGO_INSTALL_ROOT=str(cargo_root),
            CARGO_TARGET_DIR=str(REPO / "target"),
            PATH=f"{cargo_root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            PIP_DISABLE_PIP_VERSION_CHECK="1",
        )
        self.env.update({k: substitute(v, matrix) for k, v in (job_env or {}).items()})

    def checkout(self, inputs):
        if inputs:
            raise Failure(f"actions/checkout: inputs {sorted(inputs)} are not emulated")
        count = copy_checkout(self.workspace)
        say(f"  copied {count} files of {REPO} into {self.workspace}")

    def rust_toolchain(self, inputs):
        for tool in ("cargo", "rustc"):
            try:
                version = subprocess.run(
                    [tool, "--version"], env=self.env, capture_output=True, text=True, check=True
                ).stdout.strip()
            except (OSError, subprocess.CalledProcessError) as e:
                raise Failure(f"dtolnay/rust-toolchain: {tool} does not run: {e}") from None
            say(f"  {version}")
        if inputs:
            say(f"  inputs {inputs} ignored: the local toolchain is used")

    def setup_python(self, inputs):
        venv = self.tmp / "python"
        make_venv(venv)
        self.env["PATH"] = f"{venv / 'bin'}{os.pathsep}{self.env['PATH']}"
        self.env["VIRTUAL_ENV"] = str(venv)
        local = ".".join(map(str, sys.version_info[:3]))
        wanted = inputs.get("python-version")
        say(f"  fresh venv with Python {local} (the workflow asks for {wanted})")

    def upload_artifact(self, inputs):
        paths = [p.strip() for p in str(inputs.get("path", "")).splitlines() if p.strip()]
        if not paths:
            raise Failure("actions/upload-artifact: no path")
        for rel in paths:
            path = self.workspace / rel
            if path.is_dir():
                size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
            elif path.is_file():
                size = path.stat().st_size
            else:
                raise Failure(f"actions/upload-artifact: {rel} does not exist")
            if size == 0:
                raise Failure(f"actions/upload-artifact: {rel} is empty")
            detail = ""
            if path.suffix == ".xml":
                try:
                    root = ET.parse(path).getroot()
                except ET.ParseError as e:
                    raise Failure(f"actions/upload-artifact: {rel} is not XML: {e}") from None
                detail = f", <{root.tag}> with {len(root.findall('.//testcase'))} <testcase>"
            say(f"  artifact {inputs.get('name')}: {rel} ({size} bytes{detail})")

    def run(self, script, step):
        shell = step.get("shell", "bash")
        if shell != "bash":
            raise Failure(f"shell {shell} is not supported")
        script_file = self.tmp / "step.sh"
        script_file.write_text(script)
        cwd = self.workspace / substitute(step.get("working-directory", "."), self.matrix)
        env = dict(self.env)
        env.update({k: substitute(v, self.matrix) for k, v in (step.get("env") or {}).items()})
        bash = ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_file)]
        return subprocess.run(bash, cwd=cwd, env=env).returncode


ACTIONS = {
    "actions/checkout": JobRun.checkout,
    "dtolnay/rust-toolchain": JobRun.rust_toolchain,
    "actions/setup-python": JobRun.setup_python,
    "actions/upload-artifact": JobRun.upload_artifact,
}


def step_name(step, matrix):
    if "name" in step:
        return substitute(step["name"], matrix)
    if "uses" in step:
        return step["uses"]
    return substitute(str(step.get("run", "")).strip().splitlines()[0], matrix)


def run_job(job_id, job, matrix, keep):
    label = job_id + "".join(f" {k}={v}" for k, v in matrix.items())
    tmp = Path(tempfile.mkdtemp(prefix="readme-workflow-"))
    try:
        job_run = JobRun(tmp, matrix, job.get("env"))
        say(f"[{label}] runs-on {job.get('runs-on')}: running here, in {job_run.workspace}")
        steps = job.get("steps") or []
        for n, step in enumerate(steps, 1):
            name = step_name(step, matrix)
            say(f"[{label}] step {n}/{len(steps)}: {name}")
            started = time.monotonic()
            unknown = set(step) - STEP_KEYS
            if unknown:
                raise Failure(f"step '{name}': keys {sorted(unknown)} are not supported")
            # The run stops at the first failure, so success() and always() both mean: run.
            condition = EXPRESSION.sub(r"\1", str(step.get("if", "success()"))).strip()
            if condition not in ("success()", "always()"):
                raise Failure(f"step '{name}': if: {condition} is not supported")
            if ("uses" in step) == ("run" in step):
                raise Failure(f"step '{name}': needs exactly one of uses: and run:")
            if "uses" in step:
                action = step["uses"].split("@", 1)[0]
                if action not in ACTIONS:
                    raise Failure(f"step '{name}': unknown action {step['uses']}")
                inputs = {k: substitute(v, matrix) for k, v in (step.get("with") or {}).items()}
                try:
                    ACTIONS[action](job_run, inputs)
                except Failure as e:
                    raise Failure(f"step '{name}' failed: {e}") from None
            else:
                code = job_run.run(substitute(step["run"], matrix), step)
                if code != 0:
                    raise Failure(f"step '{name}' failed (exit status {code})")
            say(f"[{label}] step {n} done in {time.monotonic() - started:.1f}s")
    except Failure as e:
        raise Failure(f"[{label}] {e}") from None
    finally:
        if keep:
            say(f"[{label}] kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep each job's temporary directory")
    args = parser.parse_args()
    started = time.monotonic()
    tools = Path(tempfile.mkdtemp(prefix="readme-workflow-tools-"))
    try:
        workflow_text = extract_workflow((REPO / PAGE).read_text(encoding="utf-8"))
        say(f"installing {PYYAML} into a venv of its own, to read the workflow")
        make_venv(tools / "venv", [PYYAML])
        workflow = parse_yaml(workflow_text, str(tools / "venv" / "bin" / "python"))
        jobs = (workflow or {}).get("jobs") or {}
        if not jobs:
            raise Failure("the workflow has no jobs")
        if workflow.get("env"):
            raise Failure("a workflow-level env: is not supported (set it on the job)")
        runs = 0
        for job_id, job in jobs.items():
            unknown = set(job) - JOB_KEYS
            if unknown:
                raise Failure(f"job {job_id}: keys {sorted(unknown)} are not supported")
            for matrix in matrix_values(job_id, job):
                run_job(job_id, job, matrix, args.keep)
                runs += 1
    except (Failure, subprocess.CalledProcessError) as e:
        say(f"FAILED: {e}")
        return 1
    finally:
        shutil.rmtree(tools, ignore_errors=True)
    say(f"passed: {runs} job runs in {time.monotonic() - started:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
