"""Registering a device (mobitrace.devices.add_device) and the wiring that
makes `dvc repro` pick it up."""

import shutil

import pytest
import yaml

from mobitrace import devices
from mobitrace.studies import registry
from mobitrace.core.errors import InputError

from tests import ROOT
from tests.hostile.bases import make_base
SMOKE = ROOT / "tests" / "fixtures" / "captures" / "cpu-gbps" / "smoke-test" / "20261122T025322Z"
DVC = yaml.safe_load((ROOT / "dvc.yaml").read_text())
PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text())


@pytest.mark.parametrize("study", sorted(registry.by_slug()))
def test_device_stages_iterate_over_the_params_device_list(study):
    s = registry.by_slug()[study]
    assert isinstance(PARAMS[s.params_section]["devices"], list)
    for template in s.device_stages():
        stage = template.split("@")[0]
        assert DVC["stages"][stage]["foreach"] == "${" + s.params_section + ".devices}", stage
    for stage in s.summary_stages():
        assert stage in DVC["stages"]


def test_add_device_copies_renames_and_lists(tmp_path, scratch_project):
    src = tmp_path / "my-capture" / SMOKE.name
    shutil.copytree(SMOKE, src)
    before = (scratch_project / "params.yaml").read_text()
    reg = devices.add_device(src.parent, "my-phone", root=scratch_project)
    dest = scratch_project / "data" / "raw" / "cpu-gbps" / "my-phone" / SMOKE.name
    assert reg.copied and reg.listed and reg.sessions == [dest]
    assert reg.stages() == ["ingest_analyze_cpu_gbps@my-phone", "analyze_cpu_gbps_measured"]
    manifest = yaml.safe_load((dest / "manifest.yaml").read_text())
    assert (manifest["device"], manifest["registered_from_device"]) == ("my-phone", "smoke-test")
    # the copy is a valid capture of the new device, in place
    assert devices.validate(dest.parent) == (registry.by_slug()["cpu-gbps"], [])
    # params.yaml: one device more, every other line (comments included) kept
    after = (scratch_project / "params.yaml").read_text()
    assert yaml.safe_load(after)["cpu-gbps-measured"]["devices"][-1] == "my-phone"
    removed = set(before.splitlines()) - set(after.splitlines())
    added = set(after.splitlines()) - set(before.splitlines())
    assert removed == set() and added == {"    - my-phone"}
    # the source is untouched
    assert yaml.safe_load((src / "manifest.yaml").read_text())["device"] == "smoke-test"


def test_add_device_twice_is_refused_and_changes_nothing(tmp_path, scratch_project):
    src = tmp_path / "cap" / SMOKE.name
    shutil.copytree(SMOKE, src)
    devices.add_device(src, "twice", root=scratch_project)
    params = (scratch_project / "params.yaml").read_bytes()
    with pytest.raises(InputError, match=r"expected a device name not yet registered \('twice' is; pass --append"):
        devices.add_device(src, "twice", root=scratch_project)
    with pytest.raises(InputError, match="expected a device name not yet registered"):
        devices.add_device(src, "TWICE", root=scratch_project)  # case does not make it new
    with pytest.raises(InputError, match="expected a session not yet registered, found 'an existing folder'"):
        devices.add_device(src, "twice", root=scratch_project, append=True)
    assert (scratch_project / "params.yaml").read_bytes() == params


def test_add_device_registers_a_capture_already_in_data_raw(scratch_project):
    dest = scratch_project / "data" / "raw" / "cpu-gbps" / "smoke-test" / SMOKE.name
    shutil.copytree(SMOKE, dest)
    reg = devices.add_device(dest.parent, root=scratch_project)
    assert (reg.device, reg.copied, reg.listed) == ("smoke-test", False, True)
    assert not devices.add_device(dest.parent, root=scratch_project).listed  # idempotent


def test_add_device_rejects_a_bad_name(tmp_path, scratch_project):
    with pytest.raises(InputError, match="field 'device': expected a name of letters, digits"):
        devices.add_device(SMOKE, "../escape", root=scratch_project)
    assert list((scratch_project / "data" / "raw").iterdir()) == []


def test_priority_boost_capture_registers_under_its_params_section(tmp_path, scratch_project):
    # a few runs cut from the committed vm-2core capture: add-device copies every file and syncs the copy
    src = make_base("priority-boost", tmp_path / "cap").parent
    assert src.name == "vm-2core"
    reg = devices.add_device(src, "pb-copy", root=scratch_project)
    assert reg.study.slug == "priority-boost"
    assert yaml.safe_load((scratch_project / "params.yaml").read_text())["priority-boost"]["devices"] == ["vm-2core", "pb-copy"]


@pytest.mark.parametrize("name", ["on", "007", "null"])
def test_a_yaml_looking_device_name_stays_a_string(tmp_path, scratch_project, name):
    src = tmp_path / "cap" / SMOKE.name
    shutil.copytree(SMOKE, src)
    reg = devices.add_device(src.parent, name, root=scratch_project)
    manifest = yaml.safe_load((reg.sessions[0] / "manifest.yaml").read_text())
    assert manifest["device"] == name and manifest["registered_from_device"] == "smoke-test"
    params = yaml.safe_load((scratch_project / "params.yaml").read_text())
    assert params["cpu-gbps-measured"]["devices"][-1] == name


def _second_session(tmp_path, hostname=None):
    """The smoke capture as another session (and, optionally, another host)."""
    src = tmp_path / "cap2" / "20261122T999999Z"
    shutil.copytree(SMOKE, src)
    doc = yaml.safe_load((src / "manifest.yaml").read_text())
    doc["session"] = src.name
    if hostname:
        doc["host"]["hostname"] = hostname
    (src / "manifest.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return src


def test_append_needs_the_flag_the_exact_name_and_the_same_host(tmp_path, scratch_project):
    src = tmp_path / "cap" / SMOKE.name
    shutil.copytree(SMOKE, src)
    devices.add_device(src, "phone", root=scratch_project)
    params = (scratch_project / "params.yaml").read_bytes()
    other_host = _second_session(tmp_path / "a", hostname="someone-else")
    with pytest.raises(InputError, match=r"field 'host.hostname': expected '.*' \(as in .* of 'phone'\) with --append"):
        devices.add_device(other_host, "phone", root=scratch_project, append=True)
    same_host = _second_session(tmp_path / "b")
    with pytest.raises(InputError, match=r"expected exactly 'phone' \(the registered name\) with --append"):
        devices.add_device(same_host, "Phone", root=scratch_project, append=True)
    reg = devices.add_device(same_host, "phone", root=scratch_project, append=True)
    assert reg.copied and not reg.listed
    assert sorted(p.name for p in (scratch_project / "data" / "raw" / "cpu-gbps" / "phone").iterdir()) == \
        sorted([SMOKE.name, same_host.name])
    assert (scratch_project / "params.yaml").read_bytes() == params
    assert not list((scratch_project / "data" / "raw").glob(".staging-*"))


def test_a_run_id_that_is_not_a_name_is_refused_before_any_path(tmp_path):
    src = tmp_path / "cap" / "smoke-test" / SMOKE.name
    shutil.copytree(SMOKE, src)
    doc = yaml.safe_load((src / "manifest.yaml").read_text())
    doc["runs"][0] = "../../../../etc"
    (src / "manifest.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    _, problems = devices.validate(src)
    assert "field 'runs[0]': expected a name of letters, digits" in str(problems[0])
    doc["runs"][0] = doc["runs"][1]
    (src / "manifest.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    _, problems = devices.validate(src)
    assert "field 'runs[1]': expected unique run ids" in str(problems[0]) or \
        "field 'runs[0]': expected unique run ids" in str(problems[0])
