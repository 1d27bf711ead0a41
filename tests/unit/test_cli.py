import subprocess
import sys
from tests import ROOT


def test_cli_reports_bad_input_and_exits_2(tmp_path):
    bad = tmp_path / "cpu-gbps.yaml"
    bad.write_text("study: cpu-gbps\ncitation: x\nseed: y\nvalues: []\n")
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "mobitrace", "ingest-published", str(bad), str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 2
    assert f"error: {bad}: field 'values': expected a non-empty list of records, found []" in run.stderr
    assert not out.exists()


def _boom(args):
    raise ZeroDivisionError("a bug\nover two lines")


def test_an_unexpected_error_is_one_line_and_exit_3(monkeypatch, capsys):
    from mobitrace import cli
    monkeypatch.delenv("MOBITRACE_DEBUG", raising=False)
    monkeypatch.setattr(cli, "_dispatch", _boom)
    assert cli.main(["validate", "x"]) == cli.EXIT["bug"] == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: unexpected ZeroDivisionError: a bug over two lines")


def test_mobitrace_debug_lets_a_bug_surface(monkeypatch):
    import pytest

    from mobitrace import cli
    monkeypatch.setenv("MOBITRACE_DEBUG", "1")
    monkeypatch.setattr(cli, "_dispatch", _boom)
    with pytest.raises(ZeroDivisionError):
        cli.main(["validate", "x"])


def test_usage_errors_are_one_line_and_exit_2(capsys):
    import pytest

    from mobitrace import cli
    with pytest.raises(SystemExit) as info:
        cli.main(["add-device"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the following arguments are required: path" in err


def test_validate_and_add_device_exit_statuses_are_documented():
    from mobitrace import cli
    assert cli.EXIT == {"ok": 0, "problems": 1, "input": 2, "bug": 3, "interrupted": 130, "terminated": 143}
    for status in cli.EXIT.values():
        assert f"{status} " in cli.__doc__


def test_ingest_published_of_a_folder_writes_nothing_when_one_file_is_bad(tmp_path):
    """The pipeline's one ingest_published stage reads every study's file:
    one bad file (synthetic) leaves no study's folder behind."""
    from mobitrace.core.published import ingest_all
    from mobitrace.core.errors import InputError
    import pytest
    from pathlib import Path
    good = ROOT / "data" / "published" / "cpu-gbps.yaml"
    bad = tmp_path / "bad.yaml"
    bad.write_text("study: bad\ncitation: x\nseed: y\nvalues: []\n")
    with pytest.raises(InputError):
        ingest_all({good: tmp_path / "out" / "good", bad: tmp_path / "out" / "bad"})
    assert not (tmp_path / "out").exists()
    ingest_all({good: tmp_path / "out" / "good"})
    assert (tmp_path / "out" / "good" / "values.parquet").is_file()
