"""mobitrace.repro: `dvc repro` with the studies side by side.

On a small synthetic DVC project (two independent arms and a stage that
reads both): the parallel run gives the serial run's outputs and dvc.lock;
a failing stage stops the run with DVC's message and a non-zero exit. On
the real registry: the arms cover every stage and none reads what another
writes."""

from __future__ import annotations

import io
import subprocess
import sys
import time
from pathlib import Path

import yaml

from mobitrace import repro
from mobitrace.pipeline import dvc_stages

DVC = (sys.executable, "-m", "dvc")


def _project(tmp_path: Path, b_cmd: str = "sleep 1; echo b > b/x", a_cmd: str = "echo a > a/x") -> Path:
    """A git + DVC project (autostage on, as ours): arms a (two stages) and
    b, and `join` reading both. Synthetic."""
    root = tmp_path / "proj"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    stages = {
        "a1": {"cmd": a_cmd, "outs": ["a/x"]},
        "a2": {"cmd": "sleep 1; cat a/x a/x > a/y", "deps": ["a/x"], "outs": ["a/y"]},
        "b1": {"cmd": b_cmd, "outs": ["b/x"]},
        "join": {"cmd": "cat a/y b/x > j", "deps": ["a/y", "b/x"], "outs": ["j"]},
    }
    (root / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}, sort_keys=False))

    def run(*args):
        subprocess.run(args, cwd=root, check=True, capture_output=True)
    run("git", "init", "-q")
    run(*DVC, "init", "-q")
    run(*DVC, "config", "core.autostage", "true")
    run("git", "add", "-A")
    run("git", "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-qm", "project")
    return root


PLAN = ([("b", ["b1"]), ("a", ["a1", "a2"])], ["join"])


def _outs(lock: Path) -> dict:
    stages = yaml.safe_load(lock.read_text())["stages"]
    return {name: [(o["path"], o["md5"]) for o in s.get("outs", [])] for name, s in stages.items()}


def test_parallel_run_gives_the_serial_outputs_and_lock_synthetic(tmp_path):
    serial = _project(tmp_path / "serial")
    subprocess.run([*DVC, "repro"], cwd=serial, check=True, capture_output=True)
    for force in (False, True):
        par = _project(tmp_path / f"parallel-{force}")
        out = io.StringIO()
        assert repro.repro(par, force=force, jobs=2, dvc=DVC, out=out, plan=PLAN) == 0, out.getvalue()
        log = out.getvalue()
        for stage in ("a1", "a2", "b1", "join"):
            assert log.count(f"Running stage '{stage}'") == 1, log
        assert "b | Running stage 'b1'" in log and "a | Running stage 'a1'" in log
        assert _outs(par / "dvc.lock") == _outs(serial / "dvc.lock")
        for f in ("a/x", "a/y", "b/x", "j"):
            assert (par / f).read_bytes() == (serial / f).read_bytes(), f
        # dvc.lock staged by autostage (git add under DVC's lock), and nothing left to do
        status = subprocess.run([*DVC, "status"], cwd=par, capture_output=True, text=True, check=True).stdout
        assert "up to date" in status, status
        staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=par, capture_output=True,
                                text=True, check=True).stdout.split()
        assert "dvc.lock" in staged
    # Nothing missing: no worker, one plain `dvc repro`, which runs nothing.
    again = io.StringIO()
    assert repro.repro(par, jobs=2, dvc=DVC, out=again, plan=PLAN) == 0, again.getvalue()
    assert " | " not in again.getvalue() and "Running stage" not in again.getvalue(), again.getvalue()


def test_the_arms_run_side_by_side_synthetic(tmp_path):
    """Both arms sleep; two workers overlap them: each stage notes when its
    sleep starts and ends (beside the project), and the two intervals
    overlap, as they cannot when one worker runs them one after the other.
    (A bound on the wall time said the same until the machine was loaded.)"""
    stamp = "date +%s.%N >> ../{}"
    par = _project(tmp_path, b_cmd=f"{stamp.format('b')}; sleep 4; {stamp.format('b')}; echo b > b/x",
                   a_cmd=f"{stamp.format('a')}; sleep 4; {stamp.format('a')}; echo a > a/x")
    out = io.StringIO()
    assert repro.repro(par, jobs=2, dvc=DVC, out=out, plan=PLAN) == 0, out.getvalue()
    assert (par / "j").is_file()
    log = out.getvalue()
    (a_start, a_end), (b_start, b_end) = ([float(t) for t in (tmp_path / arm).read_text().split()] for arm in "ab")
    assert max(a_start, b_start) < min(a_end, b_end), (a_start, a_end, b_start, b_end, log)
    assert log.index("Running stage 'b1'") < log.index("Running stage 'a2'"), log


def _run_until_b_fails(tmp_path: Path, b_cmd: str, a_cmd: str) -> tuple[Path, int, float, str]:
    """The synthetic project run with two workers: (project, exit status, seconds, log)."""
    par = _project(tmp_path, b_cmd=b_cmd, a_cmd=a_cmd)
    out = io.StringIO()
    t0 = time.monotonic()
    code = repro.repro(par, jobs=2, dvc=DVC, out=out, plan=PLAN)
    return par, code, time.monotonic() - t0, out.getvalue()


def test_a_failing_stage_stops_every_worker_synthetic(tmp_path):
    par, code, took, log = _run_until_b_fails(tmp_path, "echo 'boom: b1 broke' >&2; exit 3", "sleep 30; echo a > a/x")
    assert code != 0, log
    assert "b | boom: b1 broke" in log, log              # the stage's own message
    assert "failed to reproduce 'b1'" in log, log        # DVC's
    assert log.rstrip().splitlines()[-1].startswith("error: b: `dvc repro` failed"), log
    assert took < 25, (took, log)                        # arm a's 30 s stage was interrupted
    assert not (par / "j").exists() and not (par / "a" / "x").exists()
    assert "Running stage 'join'" not in log


def test_the_studies_arms_cover_every_stage_and_read_nothing_another_writes(repo):
    arms = repro.arms(repo)
    rest = repro.rest(repo, arms)
    stages = dvc_stages()
    held = [s for _, arm in arms for s in arm]
    assert len(held) == len(set(held)), held
    groups = {s.split("@")[0] for s in held}
    assert groups | set(rest) == set(stages) and not groups & set(rest)
    assert rest and all(s in stages for s in rest)

    def paths(stage: str, key: str) -> list[str]:
        name, _, item = stage.partition("@")
        body = stages[name].get("do", stages[name])
        return [next(iter(p)) if isinstance(p, dict) else p for p in body.get(key, [])
                ] if not item else [p.replace("${item}", item) for p in body.get(key, [])]

    def inside(a: str, b: str) -> bool:
        return a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")
    for slug, arm in arms:
        others = [s for other, a in arms if other != slug for s in a]
        writes = [o for s in others for o in paths(s, "outs") + paths(s, "metrics")]
        for stage in arm:
            for dep in paths(stage, "deps"):
                assert not any(inside(dep.replace("${item}", "x"), w.replace("${item}", "x")) for w in writes), \
                    (slug, stage, dep)


def test_a_stage_command_deaf_to_sigint_is_stopped_after_the_grace_synthetic(tmp_path):
    # As when the stop's SIGINT lands while dvc forks the command: the command
    # never sees it, and would run on with the runner's pipe open.
    par, code, took, log = _run_until_b_fails(tmp_path, "sleep 2; echo 'boom' >&2; exit 3",
                                              "trap '' INT; sleep 60; echo a > a/x")
    assert code != 0, log
    assert took < 40, (took, log)                        # the grace (5 s) and SIGTERM, not the 60 s
    assert not (par / "j").exists() and not (par / "a" / "x").exists()


def test_bins_deal_the_longest_arm_to_the_least_loaded_worker():
    costs = {"a": 7.0, "b": 5.0, "c": 4.0, "d": 3.0, "e": 2.0}
    arm_list = [(slug, [f"{slug}1", f"{slug}2"]) for slug in "edcba"]  # any order in

    def cost(names):
        return sum(costs[n[0]] / 2 for n in names)
    # by hand: a->1 (7), b->2 (5), c->2 (9), d->1 (10), e->2 (11)
    assert repro.bins(arm_list, 2, cost) == [("b+c+e", ["b1", "b2", "c1", "c2", "e1", "e2"]),
                                             ("a+d", ["a1", "a2", "d1", "d2"])]
    assert [label for label, _ in repro.bins(arm_list, 8, cost)] == ["a", "b", "c", "d", "e"]
    assert repro.bins(arm_list, 1, cost)[0][0] == "a+b+c+d+e"
