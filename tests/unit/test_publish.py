"""scripts/publish.py: the self-contained site, ghp-import to a gh-pages
branch (against a local bare repository), and the Zenodo archive."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from tests import ROOT

SCRIPT = ROOT / "scripts" / "publish.py"
_spec = importlib.util.spec_from_file_location("mobitrace_publish", SCRIPT)
publish = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(publish)

LOCAL_PAGE = """<!DOCTYPE html><html lang="en"><head>
<link rel="stylesheet" href="_static/site.css"><link rel="icon" href="_static/favicon.svg">
<link rel="canonical" href="https://example.org/book/"><link rel="next" href="chapters/a.html">
<script src="_static/app.js"></script><style>body { background: url(_static/bg.png); }</style>
</head><body><a href="https://example.org/paper.pdf">paper</a><a href="#top">top</a>
<img src="_images/fig.svg" srcset="_images/fig.svg 1x, _images/fig2.svg 2x"></body></html>"""


def _site(root: Path, page: str = LOCAL_PAGE, css: str = "p { color: #222; }") -> Path:
    (root / "_static").mkdir(parents=True)
    (root / "index.html").write_text(page)
    (root / "_static" / "site.css").write_text(css)
    return root


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_local_assets_and_links_to_other_sites_pass(tmp_path):
    assert publish.asset_problems(_site(tmp_path / "html")) == []


@pytest.mark.parametrize("snippet", [
    '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"></script>',
    '<link rel="stylesheet" href="//fonts.example.com/css">',
    '<link rel="preload" as="script" href="/_static/app.js">',
    '<img src="/_images/fig.svg">',
    '<img srcset="fig.svg 1x, https://example.org/fig2.svg 2x">',
    '<a href="/chapters/a.html">root-absolute link</a>',
    '<div style="background: url(https://example.org/bg.png)"></div>',
    '<style>@import "https://example.org/x.css";</style>',
])
def test_an_asset_from_another_host_or_the_server_root_is_reported(tmp_path, snippet):
    problems = publish.asset_problems(_site(tmp_path / "html", page=f"<html><body>{snippet}</body></html>"))
    assert len(problems) == 1 and problems[0].startswith("index.html: "), problems


def test_a_stylesheet_loading_from_another_host_is_reported(tmp_path):
    css = "@font-face { src: url('https://fonts.example.com/a.woff2'); } i { background: url(../img/x.png); }"
    problems = publish.asset_problems(_site(tmp_path / "html", css=css))
    assert problems == ["_static/site.css: url('https://fonts.example.com/a.woff2')"]


def test_site_is_a_copy_with_nojekyll_and_a_reproducible_tarball(tmp_path):
    html = _site(tmp_path / "html")
    tarball = tmp_path / "dist" / "mobitrace-site-9.9.9.tar.gz"
    assert publish.make_site(html, tmp_path / "dist" / "site", tarball, mtime=1_700_000_000) == []
    assert (tmp_path / "dist" / "site" / "index.html").read_text() == LOCAL_PAGE
    assert (tmp_path / "dist" / "site" / ".nojekyll").exists()
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
        assert {m.mtime for m in tar.getmembers()} == {1_700_000_000}
    assert names == sorted(names)
    assert set(names) == {"mobitrace-site-9.9.9/.nojekyll", "mobitrace-site-9.9.9/index.html",
                          "mobitrace-site-9.9.9/_static/site.css", "mobitrace-site-9.9.9/ro-crate-metadata.json"}
    crate = check_crate(tmp_path / "dist" / "site", missing_ok={"chapters/", "results/"})  # a built book has them
    assert crate[crate["./"]["isBasedOn"]["@id"]]["@type"] == "SoftwareSourceCode"
    first = tarball.read_bytes()
    publish.make_site(html, tmp_path / "dist" / "site", tarball, mtime=1_700_000_000)
    assert tarball.read_bytes() == first


def test_site_with_a_remote_asset_writes_nothing(tmp_path):
    html = _site(tmp_path / "html", page='<script src="https://unpkg.com/x.js"></script>')
    problems = publish.make_site(html, tmp_path / "dist" / "site", tmp_path / "dist" / "s.tar.gz")
    assert problems and not (tmp_path / "dist").exists()


def test_publish_pushes_the_site_to_gh_pages_and_keeps_its_history(tmp_path):
    remote = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", str(remote))
    repos = []
    for name in ("first", "second"):  # two clones: the second builds on what the first pushed
        work = tmp_path / name
        _git(tmp_path, "init", "-q", "-b", "main", str(work))
        _git(work, "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "--allow-empty", "-m", "code")
        _git(work, "remote", "add", "origin", str(remote))
        repos.append(work)
    env_run = dict(capture_output=True, text=True,
                   env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path),
                        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost"})
    for work, text in zip(repos, ("v1", "v2")):
        site = _site(tmp_path / f"site-{text}", page=f"<html><body>{text}</body></html>")
        done = subprocess.run([sys.executable, str(SCRIPT), "publish", "--site", str(site), "--remote", "origin"],
                              cwd=work, **env_run)
        assert done.returncode == 0, done.stderr
    files = _git(remote, "ls-tree", "-r", "--name-only", "gh-pages").split()
    assert sorted(files) == [".nojekyll", "_static/site.css", "index.html"]
    assert _git(remote, "show", "gh-pages:index.html") == "<html><body>v2</body></html>"
    assert len(_git(remote, "rev-list", "gh-pages").split()) == 2


REPO = ROOT


def check_crate(folder: Path, missing_ok: set[str] = frozenset()) -> dict:
    """RO-Crate 1.1's rules for folder/ro-crate-metadata.json, checked: the
    rocrate library reads it; the metadata descriptor conforms to 1.1 and is
    about the root; the root has a name, description, date, licence and the
    five papers as citations; every local data entity exists in the folder
    (but `missing_ok`); every local reference is an entity of the graph.
    Returns {@id: entity}."""
    from rocrate.rocrate import ROCrate

    from mobitrace.studies.registry import studies

    doc = json.loads((folder / "ro-crate-metadata.json").read_text())
    assert doc["@context"] == "https://w3id.org/ro/crate/1.1/context"
    graph = {e["@id"]: e for e in doc["@graph"]}
    assert len(graph) == len(doc["@graph"])  # ids are unique
    meta = graph["ro-crate-metadata.json"]
    assert meta["conformsTo"] == {"@id": "https://w3id.org/ro/crate/1.1"} and meta["about"] == {"@id": "./"}
    root = graph["./"]
    assert root["name"] and root["description"] and re.fullmatch(r"\d{4}-\d{2}-\d{2}", root["datePublished"])
    assert graph[root["license"]["@id"]]["@type"] == "CreativeWork"
    papers = [graph[c["@id"]] for c in root["citation"]]
    assert len(papers) == len(studies()) and {p["@type"] for p in papers} == {"ScholarlyArticle"}
    for entity in doc["@graph"]:
        types = {entity["@type"]} if isinstance(entity["@type"], str) else set(entity["@type"])
        if types & {"File", "Dataset"} and entity["@id"] not in ("./",) and not entity["@id"].startswith("http"):
            assert (folder / entity["@id"]).exists() or entity["@id"] in missing_ok, entity["@id"]
        for value in entity.values():
            for ref in value if isinstance(value, list) else [value]:
                if isinstance(ref, dict) and set(ref) == {"@id"} and not ref["@id"].startswith("http"):
                    assert ref["@id"] in graph, (entity["@id"], ref)
    ROCrate(str(folder))  # the library reads it back
    return graph


def _repo_with_data(root: Path) -> Path:
    (root / "data" / "published").mkdir(parents=True)
    shutil.copy(REPO / "CITATION.cff", root / "CITATION.cff")  # what the RO-Crate metadata reads
    for path in (REPO / "data" / "published").glob("*.yaml"):
        shutil.copy(path, root / "data" / "published" / path.name)
    (root / "data" / "raw").mkdir(parents=True)
    (root / "data" / "raw" / "trace.csv").write_text("t,cpu\n0,1\n")
    (root / "dvc.lock").write_text("schema: '2.0'\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    (root / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1.2.3"\n')
    _git(root.parent, "init", "-q", "-b", "main", str(root))
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "data")
    return root


def test_archive_holds_tracked_files_the_site_and_their_sha256(tmp_path):
    repo = _repo_with_data(tmp_path / "repo")
    site = _site(tmp_path / "site")
    tarball = publish.make_archive(repo, site, tmp_path / "dist" / "mobitrace-1.2.3.tar.gz", mtime=0)
    with tarfile.open(tarball) as tar:
        members = {m.name: m for m in tar.getmembers()}
        sums = tar.extractfile("mobitrace-1.2.3/SHA256SUMS").read().decode().splitlines()
        listed = {line.split("  ", 1)[1]: line.split("  ", 1)[0] for line in sums}
        published = {f"data/published/{p.name}" for p in (repo / "data" / "published").glob("*.yaml")}
        assert set(listed) == {"data/raw/trace.csv", "dvc.lock", "pyproject.toml", "run.sh", "CITATION.cff",
                               *published, "ro-crate-metadata.json", "site/index.html", "site/_static/site.css"}
        for name, digest in listed.items():
            assert hashlib.sha256(tar.extractfile(f"mobitrace-1.2.3/{name}").read()).hexdigest() == digest
        assert members["mobitrace-1.2.3/run.sh"].mode == 0o755
        tar.extractall(tmp_path / "unpacked", filter="data")
    graph = check_crate(tmp_path / "unpacked" / "mobitrace-1.2.3")
    assert {"data/published/cpu-gbps.yaml", "dvc.lock", "site/"} <= set(graph)
    recorded = (tmp_path / "dist" / "mobitrace-1.2.3.tar.gz.sha256").read_text().split()
    assert recorded == [hashlib.sha256(tarball.read_bytes()).hexdigest(), "mobitrace-1.2.3.tar.gz"]
    assert publish.version(repo) == "1.2.3"


def test_archive_refuses_uncommitted_changes(tmp_path):
    repo = _repo_with_data(tmp_path / "repo")
    (repo / "dvc.lock").write_text("changed\n")
    with pytest.raises(SystemExit, match="uncommitted"):
        publish.make_archive(repo, _site(tmp_path / "site"), tmp_path / "dist" / "a.tar.gz", mtime=0)


def test_archive_holds_the_captures_kept_in_dvc_or_refuses_with_the_reason(dvc_project, tmp_path):
    repo = dvc_project
    capture = repo / "data" / "raw" / "cpu-gbps" / "synthetic-big" / "s1"
    capture.mkdir(parents=True)
    (capture / "manifest.yaml").write_text("device: synthetic-big\n")
    shutil.copy(REPO / "CITATION.cff", repo / "CITATION.cff")
    shutil.copytree(REPO / "data" / "published", repo / "data" / "published")
    env = {"cwd": repo, "check": True, "capture_output": True}
    subprocess.run([str(Path(sys.executable).with_name("dvc")), "add", "-q", str(capture)], **env)
    subprocess.run(["git", "add", "-A"], **env)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "big"], **env)
    site = _site(tmp_path / "site")
    assert "data/raw/cpu-gbps/synthetic-big/s1/manifest.yaml" not in _git(repo, "ls-files")  # in DVC, not git
    tarball = publish.make_archive(repo, site, tmp_path / "dist" / "a-1.tar.gz", mtime=0)
    with tarfile.open(tarball) as tar:
        assert tar.extractfile("a-1/data/raw/cpu-gbps/synthetic-big/s1/manifest.yaml").read() == \
            b"device: synthetic-big\n"
    (capture / "manifest.yaml").write_text("device: changed\n")
    with pytest.raises(SystemExit, match="differs from what data/raw/cpu-gbps/synthetic-big/s1.dvc pins"):
        publish.make_archive(repo, site, tmp_path / "dist" / "a-2.tar.gz", mtime=0)
    shutil.rmtree(capture)
    with pytest.raises(SystemExit, match=r"kept in DVC \(data/raw/cpu-gbps/synthetic-big/s1.dvc\) is not in "
                                         r"this clone; fetch it"):
        publish.make_archive(repo, site, tmp_path / "dist" / "a-3.tar.gz", mtime=0)
