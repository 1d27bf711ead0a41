"""Publish the built book (book/_build/html).

    python scripts/publish.py site     # dist/site/ + dist/mobitrace-site-<version>.tar.gz
    python scripts/publish.py publish  # dist/site/ to the gh-pages branch (ghp-import), pushed
    python scripts/publish.py archive  # dist/mobitrace-<version>.tar.gz: code, raw data,
                                       # dvc.lock, the site and SHA256SUMS (Zenodo-ready)

`site` refuses a build that loads an asset from another host or from a
root-absolute path (`/_static/...` breaks under file://). The site and the
archive each carry RO-Crate metadata (ro-crate-metadata.json,
mobitrace.crate). The archive holds the captures kept in DVC too, or
refuses, saying which is missing or changed. Tarballs are
deterministic: sorted entries, owner root, every mtime the last commit's time
(or SOURCE_DATE_EPOCH), no gzip timestamp.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import html.parser
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HTML_DIR = Path("book/_build/html")
DIST = Path("dist")
SITE_DIR = DIST / "site"

# <link rel=...> values that load something into the page (others are navigation).
_ASSET_RELS = {"stylesheet", "icon", "shortcut", "apple-touch-icon", "preload", "modulepreload",
               "prefetch", "manifest", "mask-icon"}
_CSS_URL = re.compile(r"""url\(\s*['"]?([^'")\s]+)|@import\s+['"]([^'"]+)""")


def version(repo: Path = REPO) -> str:
    return tomllib.loads((repo / "pyproject.toml").read_text())["project"]["version"]


def _remote_or_rooted(url: str) -> bool:
    """True when a URL names another host or starts at the server root."""
    url = url.strip()
    return bool(re.match(r"^(?:[a-z][a-z0-9+.-]*:)?//", url, re.I)) or url.startswith("/") \
        or url.lower().startswith(("http:", "https:"))


class _AssetScanner(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self._in_style = False

    def _check(self, tag, attr, url):
        if url and _remote_or_rooted(url):
            self.problems.append(f"<{tag} {attr}={url!r}>")

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if tag == "link":
            if set(a.get("rel", "").lower().split()) & _ASSET_RELS:
                self._check(tag, "href", a.get("href"))
        elif tag == "a":
            # Links to other sites are fine; a root-absolute one breaks under file://.
            if a.get("href", "").startswith("/") and not a["href"].startswith("//"):
                self._check(tag, "href", a["href"])
        for attr in ("src", "data", "poster"):
            self._check(tag, attr, a.get(attr))
        for part in a.get("srcset", "").split(","):
            self._check(tag, "srcset", part.strip().split(" ")[0])
        for url in _css_urls(a.get("style", "")):
            self._check(tag, "style", url)
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            for url in _css_urls(data):
                self._check("style", "url", url)


def _css_urls(css: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in _CSS_URL.finditer(css)
            if not (m.group(1) or m.group(2) or "").startswith("data:")]


def asset_problems(site_dir: Path) -> list[str]:
    """Every place in the site's HTML and CSS that would load from another
    host or from the server root, as 'file: what'."""
    problems = []
    for path in sorted(site_dir.rglob("*")):
        rel = path.relative_to(site_dir)
        if path.suffix == ".html":
            scanner = _AssetScanner()
            scanner.feed(path.read_text(encoding="utf-8", errors="replace"))
            problems += [f"{rel}: {p}" for p in scanner.problems]
        elif path.suffix == ".css":
            problems += [f"{rel}: url({u!r})" for u in _css_urls(path.read_text(errors="replace"))
                         if _remote_or_rooted(u)]
    return problems


def _source_date(repo: Path) -> int:
    if "SOURCE_DATE_EPOCH" in os.environ:
        return int(os.environ["SOURCE_DATE_EPOCH"])
    out = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=repo, capture_output=True, text=True)
    return int(out.stdout.strip() or 0)


def write_tarball(entries: dict[str, Path | bytes], tar_path: Path, mtime: int) -> Path:
    """A .tar.gz of {name in archive: file or bytes}, the same bytes for the same input."""
    tar_path.parent.mkdir(parents=True, exist_ok=True)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(entries):
            source = entries[name]
            data = source if isinstance(source, bytes) else source.read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), mtime, 0o644
            if not isinstance(source, bytes) and os.access(source, os.X_OK):
                info.mode = 0o755
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            tar.addfile(info, io.BytesIO(data))
    with open(tar_path, "wb") as out, gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as gz:
        gz.write(raw.getvalue())
    return tar_path


def _files(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}


CRATE = "ro-crate-metadata.json"


def make_site(html_dir: Path, site_dir: Path, tarball: Path, mtime: int = 0, repo: Path = REPO) -> list[str]:
    """Copy the built book to site_dir (with .nojekyll, so Jekyll-based hosts
    keep _static/, and the site's RO-Crate metadata from `repo`), check that
    every asset is local, and tar it. Returns the asset problems; nothing is
    written when there is one."""
    from mobitrace import crate

    if not (html_dir / "index.html").is_file():
        raise SystemExit(f"{html_dir}/index.html not found: run `make` first")
    problems = asset_problems(html_dir)
    if problems:
        return problems
    shutil.rmtree(site_dir, ignore_errors=True)
    shutil.copytree(html_dir, site_dir)
    (site_dir / ".nojekyll").write_bytes(b"")
    (site_dir / CRATE).write_bytes(crate.metadata(crate.site_crate(repo)))
    prefix = tarball.name.removesuffix(".tar.gz")
    write_tarball({f"{prefix}/{name}": p for name, p in _files(site_dir).items()}, tarball, mtime)
    return []


def publish(site_dir: Path, remote: str, branch: str, message: str) -> None:
    """Commit site_dir as the only content of `branch` (on top of its history
    on `remote`, if any) and push it. Runs in the current git repository."""
    import ghp_import

    # ghp-import builds on the remote-tracking branch: fetch it when the remote has one.
    subprocess.run(["git", "fetch", "--quiet", remote, f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}"],
                   capture_output=True)
    ghp_import.ghp_import(str(site_dir), remote=remote, branch=branch, mesg=message,
                          nojekyll=True, push=True)


def dvc_captures(repo: Path, tracked: list[str]) -> dict[str, Path]:
    """{path in the archive: file} of every capture kept in DVC (a tracked
    data/raw/**/<session>.dvc whose folder the remote holds). Refuses, with
    the reason, when one is not in this clone or differs from what its .dvc
    file pins: the archive would not rebuild the book."""
    kept = [name for name in tracked if name.startswith("data/raw/") and name.endswith(".dvc")]
    if not kept:
        return {}
    from dvc.repo import Repo

    files = {}
    with Repo(str(repo)) as dvc:
        for name in kept:
            for out in yaml_outs(repo / name):
                folder = (repo / name).parent / out
                rel = folder.relative_to(repo).as_posix()
                if not folder.exists():
                    raise SystemExit(f"{rel}: a capture kept in DVC ({name}) is not in this clone; fetch it "
                                     f"(`make pull`, or `dvc pull {name}`) and archive again, or the archive "
                                     "could not rebuild the book")
                if dvc.status(targets=[str(repo / name)]):
                    raise SystemExit(f"{rel}: differs from what {name} pins (raw captures are immutable); "
                                     f"restore it (`dvc checkout {name}`) and archive again")
                if folder.is_dir():
                    files |= {f"{rel}/{sub}": p for sub, p in _files(folder).items()}
                else:
                    files[rel] = folder
    return files


def yaml_outs(dvc_file: Path) -> list[str]:
    """The paths a .dvc file tracks (relative to its folder)."""
    import yaml
    return [out["path"] for out in (yaml.safe_load(dvc_file.read_text()) or {}).get("outs", [])]


def make_archive(repo: Path, site_dir: Path, tarball: Path, mtime: int) -> Path:
    """A Zenodo-ready tarball: every file git tracks (code, raw and published
    data, dvc.yaml, dvc.lock, params), the captures kept in DVC
    (dvc_captures), the built site under site/, the RO-Crate metadata
    (mobitrace.crate) and SHA256SUMS of all of them. Refuses uncommitted
    changes to tracked files."""
    from mobitrace import crate

    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                           capture_output=True, text=True, check=True).stdout
    if dirty:
        raise SystemExit(f"uncommitted changes; commit them before archiving:\n{dirty}")
    if not (site_dir / "index.html").is_file():
        raise SystemExit(f"{site_dir}/index.html not found: run `make site` first")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, text=True,
                             check=True).stdout.split("\0")
    files: dict[str, Path | bytes] = {name: repo / name for name in tracked if name and (repo / name).is_file()}
    files |= dvc_captures(repo, tracked)
    files |= {f"site/{name}": p for name, p in _files(site_dir).items()}
    files[CRATE] = crate.metadata(crate.archive_crate(repo))
    sums = "".join(f"{hashlib.sha256(p if isinstance(p, bytes) else p.read_bytes()).hexdigest()}  {name}\n"
                   for name, p in sorted(files.items()))
    prefix = tarball.name.removesuffix(".tar.gz")
    entries: dict[str, Path | bytes] = {f"{prefix}/{name}": p for name, p in files.items()}
    entries[f"{prefix}/SHA256SUMS"] = sums.encode()
    write_tarball(entries, tarball, mtime)
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    tarball.with_name(tarball.name + ".sha256").write_text(f"{digest}  {tarball.name}\n")
    return tarball


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("site", help="self-contained static site folder and tarball")
    p.add_argument("--html", type=Path, default=REPO / HTML_DIR)
    p.add_argument("--out", type=Path, default=REPO / DIST)
    p = sub.add_parser("publish", help="push the site folder to a gh-pages branch with ghp-import")
    p.add_argument("--site", type=Path, default=REPO / SITE_DIR)
    p.add_argument("--remote", default="origin")
    p.add_argument("--branch", default="gh-pages")
    p = sub.add_parser("archive", help="versioned tarball of code, data, dvc.lock, site, SHA256SUMS")
    p.add_argument("--repo", type=Path, default=REPO)
    p.add_argument("--site", type=Path, default=REPO / SITE_DIR)
    p.add_argument("--out", type=Path, default=REPO / DIST)
    args = parser.parse_args(argv)

    if args.command == "site":
        tarball = args.out / f"mobitrace-site-{version()}.tar.gz"
        problems = make_site(args.html, args.out / "site", tarball, _source_date(REPO))
        if problems:
            print("assets that are not local (they break offline and under file://):", *problems,
                  sep="\n  ", file=sys.stderr)
            return 1
        print(f"site: {args.out / 'site'}/index.html (open it from file:// or serve the folder)\n"
              f"tarball: {tarball}")
    elif args.command == "publish":
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        publish(args.site, args.remote, args.branch, f"Book built from {head or 'a working tree'}")
        print(f"published {args.site} to {args.remote} {args.branch}")
    elif args.command == "archive":
        tarball = args.out / f"mobitrace-{version(args.repo)}.tar.gz"
        make_archive(args.repo, args.site, tarball, _source_date(args.repo))
        print(f"archive: {tarball}\nsha256: {tarball}.sha256")
    return 0


if __name__ == "__main__":
    sys.exit(main())
