import subprocess
import sys


def test_cli_reports_bad_input_and_exits_2(tmp_path):
    bad = tmp_path / "cpu-gbps.yaml"
    bad.write_text("study: cpu-gbps\ncitation: x\nseed: y\nvalues: []\n")
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "mobitrace", "ingest-published", str(bad), str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 2
    assert f"error: {bad}: field 'values': expected a non-empty list of records, found []" in run.stderr
    assert not out.exists()
