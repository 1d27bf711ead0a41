"""The Pages workflow (.github/workflows/book.yml) lints clean with actionlint
and zizmor (pedantic), and keeps its shape: least privilege, actions pinned by
commit, the pipeline run from the lock, the site deployed."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from tests.helpers import tool

WORKFLOW = Path(".github/workflows/book.yml")


def test_actionlint_finds_nothing(repo):
    actionlint = tool(repo, "actionlint", "make lint-tools")
    done = subprocess.run([actionlint, "-no-color", str(WORKFLOW)], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_zizmor_finds_nothing_even_pedantic(repo):
    zizmor = tool(repo, "zizmor", "requirements.txt")
    done = subprocess.run([zizmor, "--offline", "--persona=pedantic", "--no-progress", str(WORKFLOW)],
                          cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_workflow_builds_from_the_lock_and_deploys_with_least_privilege(repo):
    flow = yaml.safe_load((repo / WORKFLOW).read_text())
    assert flow[True]["push"]["branches"] == ["main"]  # YAML 1.1 reads the key `on` as True
    assert flow["permissions"] == {} and flow["concurrency"]["group"]
    build, deploy = flow["jobs"]["build"], flow["jobs"]["deploy"]
    assert build["permissions"] == {"contents": "read"}
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    steps = build["steps"]
    python = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python@"))
    assert python["with"] == {"python-version": "3.11", "cache": "pip", "cache-dependency-path": "requirements.txt"}
    runs = [s["run"] for s in steps if "run" in s]
    assert runs[1:] == ["make pull", "make", "make site"]
    # the DVC remote (captures kept in DVC) from repository secrets, through env, never inline
    remote = next(s for s in steps if "run" in s and ".dvc/config.local" in s["run"])
    assert remote["env"]["DVC_REMOTE_URL"] == "${{ secrets.DVC_REMOTE_URL }}" and "${{" not in remote["run"]
    assert steps.index(remote) < steps.index(next(s for s in steps if s.get("run") == "make"))
    make = next(s for s in steps if s.get("run") == "make")
    assert set(make["env"]) == {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}
    # The run cache comes from the same remote, with the same keys, before the build.
    pull = next(s for s in steps if s.get("run") == "make pull")
    assert pull["env"] == make["env"] and steps.index(remote) < steps.index(pull) < steps.index(make)
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "dist/site"
    assert deploy["steps"][0]["uses"].startswith("actions/deploy-pages@")
    for step in steps + deploy["steps"]:
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]


def test_publish_page_names_the_workflows_secrets_and_existing_make_targets(repo):
    page = (repo / "book" / "publish.md").read_text()
    secrets = set(re.findall(r"secrets\.(\w+)", (repo / WORKFLOW).read_text()))
    assert secrets and {s for s in secrets if f"`{s}`" not in page} == set()
    makefile = (repo / "Makefile").read_text()
    targets = set(re.findall(r"`make (\w+)`", page))
    assert {"pull", "push", "archive", "publish"} <= targets
    assert {t for t in targets if not re.search(rf"^{t}:", makefile, re.M)} == set()
