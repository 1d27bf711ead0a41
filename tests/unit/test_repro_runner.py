"""mobitrace.repro: `dvc repro`, independent stages side by side.

On a small synthetic DVC project (a `dvc add`ed source, two independent
chains and a stage that reads both): the parallel run gives a serial `dvc
repro`'s outputs and dvc.lock, byte for byte, forced or not, fresh or after
a change; independent stages overlap; a failing stage stops the run with
its message and a non-zero exit, and dvc.lock keeps the stages that
finished, as DVC's Ctrl-C path does."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from mobitrace import repro

pytestmark = [pytest.mark.waits, pytest.mark.xdist_group("test_repro_runner")]  # tests/conftest.py

DVC = (sys.executable, "-m", "dvc")


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """git and DVC set up once (autostage on, as ours; src.txt `dvc add`ed):
    each test's project is a copy of it. Synthetic."""
    root = tmp_path_factory.mktemp("template") / "proj"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "src.txt").write_text("source\n")
    for args in (["git", "init", "-q"], [*DVC, "init", "-q"], [*DVC, "config", "core.autostage", "true"],
                 [*DVC, "add", "-q", "src.txt"]):
        subprocess.run(args, cwd=root, check=True, capture_output=True)
    return root


# b1 starts its folder from nothing, .gitignore included, as a chapter stage does
def _project(tmp_path: Path, template: Path, b_cmd: str = "sleep 1; rm -rf b; mkdir b; echo b > b/x",
             a_cmd: str = "cat src.txt > a/x", join_cmd: str = "cat a/y b/x > j", join_out="j") -> Path:
    """A copy of `template` with a1 (reads src.txt) -> a2, b1, and `join`
    reading a2's and b1's output, committed. Synthetic."""
    root = tmp_path / "proj"
    shutil.copytree(template, root, symlinks=True)
    stages = {
        "a1": {"cmd": a_cmd, "deps": ["src.txt"], "outs": ["a/x"]},
        "a2": {"cmd": "sleep 1; cat a/x a/x > a/y", "deps": ["a/x"], "outs": ["a/y"]},
        "b1": {"cmd": b_cmd, "outs": ["b/x"]},
        "join": {"cmd": join_cmd, "deps": ["a/y", "b/x"], "outs": [join_out]},
    }
    (root / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}, sort_keys=False))
    for args in (["git", "add", "-A"], ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-qm", "project"]):
        subprocess.run(args, cwd=root, check=True, capture_output=True)
    return root


OUTPUTS = ("a/x", "a/y", "b/x", "j", "a/.gitignore", "b/.gitignore", ".gitignore")


def _dvc(root: Path, *args: str) -> str:
    return subprocess.run([*DVC, *args], cwd=root, capture_output=True, text=True, check=True).stdout


def _same(par: Path, serial: Path) -> None:
    assert (par / "dvc.lock").read_text() == (serial / "dvc.lock").read_text()
    for f in OUTPUTS:
        assert (par / f).read_bytes() == (serial / f).read_bytes(), f
    assert "up to date" in _dvc(par, "status")


def test_parallel_run_gives_the_serial_outputs_and_lock_synthetic(tmp_path, template):
    serial = _project(tmp_path / "serial", template)
    _dvc(serial, "repro")
    par = _project(tmp_path / "parallel", template)
    for force in (False, True):  # a fresh project, then everything again over it
        out = io.StringIO()
        assert repro.repro(par, force=force, jobs=2, out=out) == 0, out.getvalue()
        log = out.getvalue()
        for stage in ("a1", "a2", "b1", "join"):
            assert log.count(f"Running stage '{stage}'") == 1, log
            assert re.search(rf"^Finished stage '{stage}' in \d+\.\d s$", log, re.M), log
        # each stage's place, and one closing line (src.txt.dvc: a data source, checked)
        assert sorted(re.findall(r"\(stage (\d) of 5\)", log)) == ["2", "3", "4", "5"], log
        assert re.search(r"^5 stages: 4 ran, 1 unchanged; \d+\.\d s in all\.$", log.rstrip().splitlines()[-1]), log
        assert "b1 | " not in log  # the commands print nothing
        _same(par, serial)
        # dvc.lock staged by autostage, as `dvc repro` stages it
        staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=par, capture_output=True,
                                text=True, check=True).stdout.split()
        assert "dvc.lock" in staged
    # Nothing changed: nothing runs.
    again = io.StringIO()
    assert repro.repro(par, jobs=2, out=again) == 0, again.getvalue()
    assert "Running stage" not in again.getvalue(), again.getvalue()
    assert again.getvalue().count("didn't change, skipping") == 5, again.getvalue()
    assert again.getvalue().rstrip().splitlines()[-1].startswith(
        "5 stages unchanged: Data and pipelines are up to date"), again.getvalue()


def test_after_a_change_only_what_depends_on_it_reruns_as_with_dvc_synthetic(tmp_path, template):
    """The data source changes: a1, a2 and join rerun, b1 does not; the
    lock and outputs are those of `dvc repro` after the same change."""
    serial, par = _project(tmp_path / "serial", template), _project(tmp_path / "par", template)
    _dvc(serial, "repro")
    assert repro.repro(par, jobs=2, out=io.StringIO()) == 0
    for root in (serial, par):
        (root / "src.txt").write_text("changed\n")
    _dvc(serial, "repro")
    out = io.StringIO()
    assert repro.repro(par, jobs=2, out=out) == 0, out.getvalue()
    log = out.getvalue()
    assert [s for s in ("a1", "a2", "b1", "join") if f"Running stage '{s}'" in log] == ["a1", "a2", "join"], log
    assert (par / "src.txt.dvc").read_text() == (serial / "src.txt.dvc").read_text()
    _same(par, serial)


def test_a_command_sees_in_dvc_lock_every_stage_restored_before_it_synthetic(tmp_path, template):
    """src.txt goes v1 -> v2 -> v1: the third run restores a1 and a2 from
    DVC's run cache (no command) and runs join (an uncached output: no run
    cache), whose command copies dvc.lock as it finds it: a1's entry there
    is already the v1 one, as under `dvc repro`."""
    par = _project(tmp_path, template, join_cmd="cat a/y b/x > j; cp dvc.lock ../join-saw.lock",
                   join_out={"j": {"cache": False}})
    for text in ("v1\n", "v2\n", "v1\n"):
        (par / "src.txt").write_text(text)
        out = io.StringIO()
        assert repro.repro(par, jobs=2, out=out) == 0, out.getvalue()
    log = out.getvalue()
    assert "Stage 'a1' is cached - skipping run" in log and "Running stage 'a1'" not in log, log
    assert "Running stage 'join'" in log, log
    saw = yaml.safe_load((tmp_path / "join-saw.lock").read_text())["stages"]
    assert saw["a1"] == yaml.safe_load((par / "dvc.lock").read_text())["stages"]["a1"]


def test_the_independent_stages_run_side_by_side_synthetic(tmp_path, template):
    """a1 and b1 sleep; two workers overlap them: each stage notes when its
    sleep starts and ends (beside the project), and the two intervals
    overlap, as they cannot when one worker runs them one after the other."""
    stamp = "date +%s.%N >> ../{}"
    par = _project(tmp_path, template, b_cmd=f"{stamp.format('b')}; sleep 4; {stamp.format('b')}; echo b > b/x",
                   a_cmd=f"{stamp.format('a')}; sleep 4; {stamp.format('a')}; cat src.txt > a/x")
    out = io.StringIO()
    assert repro.repro(par, jobs=2, out=out) == 0, out.getvalue()
    assert (par / "j").is_file()
    (a_start, a_end), (b_start, b_end) = ([float(t) for t in (tmp_path / arm).read_text().split()] for arm in "ab")
    assert max(a_start, b_start) < min(a_end, b_end), (a_start, a_end, b_start, b_end, out.getvalue())


def test_one_worker_starts_the_longest_path_first_synthetic(tmp_path, template):
    """Times by hand (.mobitrace/timings.json): b1 5 s, a1 and a2 1 s, join
    1 s. Paths ahead: b1 6.9, a1 3.9, a2 2.6, join 1.3 (each + 0.3 s of the
    runner's own): one worker runs b1 first."""
    par = _project(tmp_path, template, b_cmd="echo b > b/x")  # a command of its own: its time below
    cmds = {s["cmd"]: s for s in yaml.safe_load((par / "dvc.yaml").read_text())["stages"].values()}
    took = {cmd: {"wall_s": 5.0 if cmd.startswith("echo b") else 1.0} for cmd in cmds}
    (par / ".mobitrace").mkdir()
    (par / ".mobitrace" / "timings.json").write_text(json.dumps(took))
    out = io.StringIO()
    assert repro.repro(par, jobs=1, out=out) == 0, out.getvalue()
    log = out.getvalue()
    order = sorted(("a1", "a2", "b1", "join"), key=lambda s: log.index(f"Running stage '{s}'"))
    assert order == ["b1", "a1", "a2", "join"], log


def _run_until_b_fails(tmp_path: Path, template: Path, b_cmd: str, a_cmd: str) -> tuple[Path, int, float, str]:
    """The synthetic project run with two workers: (project, exit status, seconds, log)."""
    par = _project(tmp_path, template, b_cmd=b_cmd, a_cmd=a_cmd)
    out = io.StringIO()
    t0 = time.monotonic()
    code = repro.repro(par, jobs=2, out=out)
    return par, code, time.monotonic() - t0, out.getvalue()


def test_a_failing_stage_stops_every_worker_synthetic(tmp_path, template):
    par, code, took, log = _run_until_b_fails(tmp_path, template, "sleep 2; echo 'boom: b1 broke' >&2; exit 3",
                                              "cat src.txt > a/x; sleep 30")
    assert code == 3, log
    assert "b1 | boom: b1 broke" in log, log              # the stage's own message
    assert log.rstrip().splitlines()[-1].startswith("error: failed to reproduce 'b1'"), log
    assert took < 25, (took, log)                         # a1's 30 s command was interrupted
    assert not (par / "j").exists() and not (par / "b" / "x").exists()
    assert "Running stage 'join'" not in log and "Running stage 'a2'" not in log
    assert not (par / "dvc.lock").exists()                # a1 was interrupted: nothing finished


def test_the_stages_that_finished_before_a_failure_stay_in_the_lock_synthetic(tmp_path, template):
    par, code, took, log = _run_until_b_fails(tmp_path, template, "sleep 4; exit 5", "cat src.txt > a/x")
    assert code == 5, log
    locked = yaml.safe_load((par / "dvc.lock").read_text())["stages"]
    assert {"a1", "a2"} <= set(locked) and "b1" not in locked and "join" not in locked, locked
    assert "up to date" in _dvc(par, "status", "a1", "a2")


def test_a_stage_command_deaf_to_sigint_is_stopped_after_the_grace_synthetic(tmp_path, template):
    # As when the stop's SIGINT lands while the shell forks the command: the
    # command never sees it, and would run on with the runner's pipe open.
    par, code, took, log = _run_until_b_fails(tmp_path, template, "sleep 2; echo 'boom' >&2; exit 3",
                                              "trap '' INT; sleep 60; cat src.txt > a/x")
    assert code != 0, log
    assert took < 40, (took, log)                         # the grace (5 s) and SIGTERM, not the 60 s
    assert not (par / "j").exists() and not (par / "a" / "x").exists()


def test_git_tracked_paths_are_answered_as_dulwich_answers_synthetic(tmp_path, template):
    """_read_git_index_once: one read of .git/index per version, the same
    answers as scmrepo's is_tracked (a folder with a tracked file under it
    is tracked; "a/b" is not because "a/b-c" is), and a new answer after
    `git add`."""
    from dvc.repo import Repo

    root = _project(tmp_path, template)
    for name in ("d/b-c", "d/b/x", "d/bb"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    subprocess.run(["git", "add", "d/b-c", "d/bb"], cwd=root, check=True)
    repo = Repo(str(root))
    dulwich_answer = repo.scm.is_tracked
    repro._read_git_index_once(repo.scm)
    paths = ["d", "d/b", "d/b-c", "d/b/x", "d/bb", "d/b-", "src.txt", "src.txt.dvc", "a", "nothing"]
    for rel in paths:
        assert repo.scm.is_tracked(str(root / rel)) == dulwich_answer(str(root / rel)), rel
    assert not repo.scm.is_tracked(str(root / "d" / "b"))
    subprocess.run(["git", "add", "d/b/x"], cwd=root, check=True)
    assert repo.scm.is_tracked(str(root / "d" / "b")) and dulwich_answer(str(root / "d" / "b"))
    repo.close()


def test_an_output_git_already_tracks_is_refused_as_dvc_refuses_it_synthetic(tmp_path, template):
    par = _project(tmp_path, template)
    assert repro.repro(par, jobs=2, out=io.StringIO()) == 0
    subprocess.run(["git", "add", "-f", "b/x"], cwd=par, check=True)
    out = io.StringIO()
    assert repro.repro(par, force=True, jobs=2, out=out) == 1, out.getvalue()
    assert "output 'b/x' is already tracked by SCM" in out.getvalue(), out.getvalue()


def test_a_stage_whose_output_breaks_ends_the_run_instead_of_hanging_it_synthetic(tmp_path, template):
    """A reader that goes away (the output pipe closes) while a stage
    finishes: the run still hears that the stage ended, and stops, instead
    of waiting for it forever."""
    import threading

    class ClosedAfterAStage(io.StringIO):
        def write(self, text):
            if "Finished stage" in text:
                raise BrokenPipeError(32, "Broken pipe")
            return super().write(text)

    par = _project(tmp_path, template)
    ended: list = []
    runner = threading.Thread(target=lambda: ended.append(_returned(repro.repro, par, jobs=2,
                                                                    out=ClosedAfterAStage())), daemon=True)
    runner.start()
    runner.join(60)
    assert ended, "the run hung after its output broke"


def _returned(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except OSError as exc:
        return exc


def test_a_long_command_says_it_is_still_running_synthetic(tmp_path, template, monkeypatch):
    """A command that runs longer than the heartbeat says so (b1 and a2 sleep 1 s)."""
    monkeypatch.setattr(repro, "HEARTBEAT_S", 0.3)
    par = _project(tmp_path, template)
    out = io.StringIO()
    assert repro.repro(par, jobs=2, out=out) == 0, out.getvalue()
    assert re.search(r"^\.\.\. 'b1' still running \(\d+ s\)$", out.getvalue(), re.M), out.getvalue()
    assert "'a1' still running" not in out.getvalue(), out.getvalue()  # cat: done at once


def test_stage_file_walk_skips_session_folders_synthetic(tmp_path, monkeypatch):
    """The runner's stage-file walk finds what DVC's full walk finds (a
    device's `<session>.dvc` included) without entering session folders."""
    from dvc.repo import Repo
    from dvc.repo import index as dvc_index

    from mobitrace import repro

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    device = tmp_path / "data" / "raw" / "study" / "dev"
    (device / "s1" / "deep").mkdir(parents=True)
    (device / "s1" / "deep" / "trace.csv").write_text("t\n1\n")
    (device / "s2").mkdir()
    (device / "s2" / "trace.csv").write_text("t\n2\n")
    (device / "s2.dvc").write_text("outs:\n- path: s2\n")
    (tmp_path / "dvc.yaml").write_text("stages:\n  a:\n    cmd: echo a\n    deps:\n    - data/raw/study\n")
    monkeypatch.chdir(tmp_path)
    subprocess.run(["dvc", "init", "-q"], check=True)
    repo = Repo(str(tmp_path))
    full = sorted(p for p, _ in dvc_index.collect_files(repo))
    monkeypatch.setattr(dvc_index, "collect_files", dvc_index.collect_files)  # restored after
    walked = []
    walk = repo.dvcignore.walk
    monkeypatch.setattr(repo.dvcignore, "walk", lambda fs, path, **kw: (walked.append(w[0]) or w for w in walk(fs, path, **kw)), raising=False)
    repro._collect_stage_files_above_sessions()
    pruned = sorted(p for p, _ in dvc_index.collect_files(repo))
    assert full == pruned == sorted([str(tmp_path / "dvc.yaml"), str(device / "s2.dvc")])
    assert str(device) in walked and not any(str(device / "s1") in root for root in walked)
    repo.close()


def test_params_parsed_once_per_version_synthetic(tmp_path, monkeypatch):
    """The runner's params.yaml reader parses a version once, and a changed
    file (one parameter) is read again; callers cannot change each other's copy."""
    from dvc.dependency import param
    from dvc.fs import LocalFileSystem

    from mobitrace import repro

    monkeypatch.setattr(param, "load_path", param.load_path)  # restored after
    calls = []
    full = param.load_path
    monkeypatch.setattr(param, "load_path", lambda path, fs, **kw: calls.append(path) or full(path, fs, **kw))
    repro._parse_params_once_per_version()
    fs, path = LocalFileSystem(), str(tmp_path / "params.yaml")
    Path(path).write_text("study:\n  alpha: 0.05\n")
    first = param.read_param_file(fs, path)
    first["study"]["alpha"] = 1
    assert param.read_param_file(fs, path, ["study.alpha"], flatten=True) == {"study.alpha": 0.05}
    assert len(calls) == 1
    Path(path).write_text("study:\n  alpha: 0.010\n")
    assert param.read_param_file(fs, path, ["study.alpha"], flatten=True) == {"study.alpha": 0.01}
    assert len(calls) == 2
