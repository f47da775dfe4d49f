"""The sample GitHub Actions workflow (issue 14, section 5): it cannot run here, so its shape is
checked: valid YAML, read-only permissions, a timeout and a pip cache for every job, the package
lists updated before any install, the wall-clock gate's table in the step summary, and its
benchmark JSON uploaded from where the gate keeps it."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "sample-ci.yml"


def _workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _steps() -> list[dict[str, Any]]:
    return [step for job in _workflow()["jobs"].values() for step in job["steps"]]


def test_it_reads_the_repository_only_and_every_job_has_a_timeout() -> None:
    data = _workflow()
    assert data["permissions"] == {"contents": "read"}
    for name, job in data["jobs"].items():
        assert isinstance(job.get("timeout-minutes"), int), name


def test_every_python_set_up_caches_pip_on_the_dependency_files() -> None:
    setups = [step for step in _steps() if step.get("uses", "").startswith("actions/setup-python")]
    assert setups
    for step in setups:
        assert step["with"]["cache"] == "pip"
        assert set(step["with"]["cache-dependency-path"].split()) == {
            "pyproject.toml", "constraints.txt"
        }


def test_apt_get_update_comes_before_every_install() -> None:
    scripts = [step["run"] for step in _steps() if "apt-get install" in step.get("run", "")]
    assert scripts
    for script in scripts:
        assert "apt-get update" in script
        assert script.index("apt-get update") < script.index("apt-get install")


def test_the_gate_writes_the_step_summary_and_its_json_is_uploaded() -> None:
    steps = _steps()
    (gate,) = [step for step in steps if "make bench-gate" in step.get("run", "")]
    words = shlex.split(gate["run"])
    assert 'GATE_SUMMARY=$GITHUB_STEP_SUMMARY' in words
    (json_dir,) = [w.removeprefix("GATE_JSON=") for w in words if w.startswith("GATE_JSON=")]
    uploads = [step for step in steps if step.get("uses", "").startswith("actions/upload-artifact")]
    assert any(
        step["with"]["path"].rstrip("/") == json_dir and step.get("if") == "always()"
        for step in uploads
    )
    # The variables are the Makefile's: they reach bench/gate.py as its options.
    done = subprocess.run(
        ["make", "-n", "bench-gate", f"GATE_JSON={json_dir}", "GATE_SUMMARY=summary.md"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )
    command = re.sub(r"\\\n\s*", "", done.stdout)
    assert f"--json-dir '{json_dir}'" in command and "--markdown 'summary.md'" in command
