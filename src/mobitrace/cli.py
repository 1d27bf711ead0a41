"""Command line: `python -m mobitrace COMMAND ...` (also `mobitrace`).

Exit status (EXIT below): 0 done; 1 `validate` found problems (one line
each); 2 bad input or usage (one line: `error: FILE[: line N][: field 'F']:
expected ..., found ...`); 3 an unexpected error (one line; a bug in
mobitrace: set MOBITRACE_DEBUG=1 to get the traceback); 130 interrupted
(Ctrl-C); 143 terminated (SIGTERM). No input ends in a traceback; temporary
and staging folders are removed on every one of these exits."""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
from pathlib import Path

from mobitrace.core import timings
from mobitrace.core.errors import InputError, printable
from mobitrace.core.io import repo_root  # light: no pandas
from mobitrace.studies import registry

EXIT = {"ok": 0, "problems": 1, "input": 2, "bug": 3, "interrupted": 130, "terminated": 143}
# Commands that only read captures or register one: they leave no timing
# behind (`validate` writes nothing; `add-device` writes only the device).
_NO_TIMINGS = {"validate", "add-device", "remove-device", "rename-device", "sync", "capture", "new-study", "repro"}


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line too (exit 2)."""

    def error(self, message: str):
        self.exit(EXIT["input"], f"error: {self.prog}: {_one_line(message)} (see --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mobitrace", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("ingest-published", help="validate data/published/<study>.yaml into parquet")
    p.add_argument("src", help="a published file, or the folder of every study's <study>.yaml")
    p.add_argument("out_dir", help="the file's folder of tables, or (SRC a folder) the parent of one per study")
    p = sub.add_parser("run-notebook", help="execute notebooks/<name>.py with papermill, then its "
                       "supplements (methods pages) in the same kernel")
    p.add_argument("study")
    p.add_argument("--with", dest="shared", action="append", default=[], metavar="SECTION",
                   help="also pass params.yaml's SECTION (e.g. power-models) as a parameter")
    p = sub.add_parser("build-book", help="render book/ to book/_build/html (no execution)")
    p.add_argument("book_dir", nargs="?", default="book")
    slugs = [study.slug for study in registry.studies()]
    p = sub.add_parser("ingest", help="validate a device's raw captures (data/raw/<study>/<device>) into parquet")
    p.add_argument("study", choices=slugs)
    p.add_argument("device_dir")
    p.add_argument("out_dir")
    p.add_argument("--raw-hashes", metavar="FILE",
                   help="then write the raw folder's hash, as DVC pins it, to FILE (the book depends on it)")
    p.add_argument("--analyze", metavar="RESULTS_DIR",
                   help="then run the study's per-device analysis (fits and figures of the device) on OUT_DIR into "
                        f"RESULTS_DIR (studies: {', '.join(s.slug for s in registry.studies() if s.device_analysis_params)})")
    p = sub.add_parser("capture", help="run a study's capture kit (root): capture STUDY -- KIT-ARGS")
    p.add_argument("study", choices=slugs)
    p.add_argument("kit_args", nargs=argparse.REMAINDER, help="passed to the kit (see its --help)")
    p = sub.add_parser("new-study", help="scaffold a study: its folder, notebook, published numbers, "
                                         "params section and book entry")
    p.add_argument("name", help="lower-case words joined by '-'")
    p = sub.add_parser("repro", help="`dvc repro` with independent stages side by side (`make` runs it)")
    p.add_argument("-f", "--force", action="store_true", help="run every stage (dvc repro -f)")
    p.add_argument("-j", "--jobs", type=int, metavar="N", help="stages at once (default: one per CPU)")
    p = sub.add_parser("sync", help="write dvc.yaml and book/_toc.yml from the study registry")
    p = sub.add_parser("validate", help="check a capture folder (session or device) of any study; "
                                        "print every problem; exit 1 if there is one")
    p.add_argument("path")
    p = sub.add_parser("add-device", help="validate a capture and register it as a device: copy it to "
                                          "data/raw/<study>/<device>/ and list it in params.yaml")
    p.add_argument("path")
    p.add_argument("--device", help="device name (default: the manifest's)")
    p.add_argument("--append", action="store_true",
                   help="add sessions to an existing device of the same name (its host metadata must match)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--dvc", dest="storage", action="store_const", const="dvc",
                       help="keep every session in DVC (dvc add, push to the default remote), whatever its size")
    where.add_argument("--git", dest="storage", action="store_const", const="git",
                       help="keep every session in git, whatever its size (default: sessions over params.yaml "
                            "raw-storage.dvc_threshold_mb go to DVC)")
    p.add_argument("--dry-run", action="store_true", help="check everything and say what would be done; write nothing")
    p.set_defaults(storage="auto")
    p = sub.add_parser("remove-device", help="undo an add-device not yet committed (committed captures are "
                                             "immutable: supersede them in params.yaml)")
    p.add_argument("study", choices=slugs)
    p.add_argument("device")
    p = sub.add_parser("rename-device", help="rename a device not yet committed (its folder, manifests and "
                                             "params.yaml entry)")
    p.add_argument("study", choices=slugs)
    p.add_argument("device")
    p.add_argument("new_name")
    return parser


def _study_params(study) -> dict:
    """The study's section of params.yaml (empty if it has none)."""
    import yaml

    return yaml.safe_load((repo_root() / "params.yaml").read_text()).get(study.params_section) or {}


def _dispatch(args) -> None:
    if args.command == "ingest-published":
        from mobitrace.core import published
        src, out = Path(args.src), Path(args.out_dir)
        published.ingest_all({src / f"{s.slug}.yaml": out / s.slug for s in registry.studies()} if src.is_dir()
                             else {src: out})
    elif args.command == "run-notebook":
        from mobitrace import notebooks
        notebooks.run(args.study, shared=tuple(args.shared))
    elif args.command == "build-book":
        from mobitrace.book import build as book
        book.build(args.book_dir)
    elif args.command == "ingest":
        from mobitrace.core import capture_layout, capture_reader
        study = registry.by_slug()[args.study]
        if args.analyze and study.device_analysis_params is None:
            _parser().error(f"ingest --analyze: {study.slug} has no per-device analysis")
        with capture_reader.read_once():  # the layout check, the ingest and the raw hash share one walk
            capture_layout.check_device_folder(Path(args.device_dir), study)  # data only, even under plain dvc repro
            section = _study_params(study)
            with capture_reader.superseding(section.get("superseded"), f"params.yaml: {study.params_section}"):
                study.module("ingest").ingest(args.device_dir, args.out_dir)
            if args.raw_hashes:
                from mobitrace.core import raw_hashes
                raw_hashes.write(args.device_dir, args.raw_hashes)
        if args.analyze:
            study.module("device_analysis").analyze(args.out_dir, args.analyze,
                                                    {key: section[key] for key in study.device_analysis_params})
    elif args.command == "capture":
        import subprocess

        study = registry.by_slug()[args.study]
        if study.capture_kit is None:
            raise InputError(Path("src/mobitrace/studies") / study.package / "study.yaml", None, "capture_kit",
                             "a capture kit", "none yet")
        kit = repo_root() / study.capture_kit
        kit_args = args.kit_args[1:] if args.kit_args[:1] == ["--"] else args.kit_args
        raw = repo_root() / "data" / "raw" / study.slug
        before = _sessions(raw)
        status = subprocess.run([sys.executable, str(kit), *kit_args]).returncode
        if status == 0 and "--smoke" not in kit_args:
            registered = _study_params(study).get("devices", [])
            for session in sorted(_sessions(raw) - before):
                where = session.relative_to(repo_root())
                add = (f"add-device --append {where}" if session.parent.name in registered
                       else f"add-device {where.parent}")
                print(f"Next: python -m mobitrace validate {where}\n"
                      f"      python -m mobitrace {add}\n"
                      "      make    # the device's stages, then the book")
        return status
    elif args.command == "new-study":
        from mobitrace.scaffold import new_study
        root = repo_root()
        for path in new_study(args.name, root):
            print(f"wrote {path.relative_to(root)}")
        print("Next: fill in the TODOs, then `make` runs the study's stages and builds its chapter.")
    elif args.command == "repro":
        from mobitrace import repro
        from mobitrace.core import capture_layout
        capture_layout.check_raw_tree(repo_root(), registry.by_slug())  # before DVC reads a stage file
        return repro.repro(repo_root(), force=args.force, jobs=args.jobs)
    elif args.command == "sync":
        from mobitrace import pipeline
        for path in pipeline.sync(repo_root()):
            print(f"wrote {path}")
    elif args.command == "validate":
        return _validate(args.path)
    elif args.command == "add-device":
        _add_device(args.path, args.device, args.append, args.storage, args.dry_run)
    elif args.command == "remove-device":
        from mobitrace import devices
        folder = devices.remove_device(args.study, args.device, repo_root())
        print(f"{args.study}: device '{args.device}' removed ({folder.relative_to(repo_root())} and its entry in "
              "params.yaml); `make` rebuilds without it.")
    elif args.command == "rename-device":
        from mobitrace import devices
        folder = devices.rename_device(args.study, args.device, args.new_name, repo_root())
        print(f"{args.study}: device '{args.device}' is now '{args.new_name}' ({folder.relative_to(repo_root())}, "
              "params.yaml; staged for git); `make` rebuilds it under its new name.")


def _validate(path: str) -> int:
    from mobitrace import devices
    study, problems = devices.validate(path)
    for exc in problems:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
    if problems:
        print(f"{printable(path)}: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"{printable(path)}: valid {study.slug} capture")
    return 0


def _add_device(path: str, device: str | None, append: bool = False, storage: str = "auto",
                dry_run: bool = False) -> None:
    from mobitrace import devices
    root = repo_root()
    reg = devices.add_device(path, device, root=root, append=append, storage=storage, dry_run=dry_run,
                             notify=lambda line: print(f"note: {line}", flush=True))
    where = ", ".join(str(d.relative_to(root)) for d in reg.sessions)
    if reg.dry_run:
        kept = {d for d in reg.in_dvc}
        print(f"{reg.study.slug}: valid; add-device would copy the capture to {where} "
              f"({', '.join('DVC' if d in kept else 'git' for d in reg.sessions)}), "
              f"{'list' if reg.listed else 'keep'} '{reg.device}' in params.yaml {reg.study.params_section}.devices, "
              f"and `make` would run {', '.join(reg.stages())}. Nothing was written.")
        return
    print(f"{reg.study.slug}: device '{reg.device}' "
          f"{'copied to ' + where if reg.copied else 'already in ' + where}; "
          f"params.yaml {reg.study.params_section}.devices "
          f"{'now lists it' if reg.listed else 'already listed it'}.")
    if reg.in_dvc:
        dvc_files = " ".join(str(d.relative_to(root)) + ".dvc" for d in reg.in_dvc)
        print(f"Kept in DVC (over raw-storage.dvc_threshold_mb, or --dvc): {dvc_files}, pushed to the DVC remote "
              f"'{reg.remote}' (see .dvc/config: by default a folder beside this clone).")
    print("Next: `make` (or `dvc repro`) runs " + ", ".join(reg.stages())
          + f", then the book; the device appears in chapters/{reg.study.device_chapter.name}.")
    if reg.staged:
        print(f"Everything add-device changed is staged for git; after `make`: "
              f"git add dvc.lock && git commit -m 'Add device {reg.device} ({reg.study.slug})'")
    else:
        print("Then commit params.yaml and " + ", ".join(
            str(d.relative_to(root)) + (".dvc" if d in reg.in_dvc else "") for d in reg.sessions) + " with dvc.lock.")



def _sessions(raw: Path) -> set[Path]:
    """The finished session folders <device>/<session> under a study's raw folder."""
    return {p for p in raw.glob("*/*") if p.is_dir() and not p.name.endswith(".partial")} if raw.is_dir() else set()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        with timings.Stopwatch() as watch:
            status = _dispatch(args)
    except InputError as exc:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT["input"]
    except MemoryError:
        print(f"error: {printable(str(getattr(args, 'path', args.command)))}: out of memory "
              "(free memory, or split the capture into smaller sessions)", file=sys.stderr)
        return EXIT["input"]
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return EXIT["interrupted"]
    except _Terminated:
        print("error: terminated (SIGTERM)", file=sys.stderr)
        return EXIT["terminated"]
    except Exception as exc:  # noqa: BLE001 -- one line, never a traceback
        if isinstance(exc, OSError) and exc.errno in _ENVIRONMENT_ERRNOS:  # the machine's limits, not a bug
            where = exc.filename or getattr(args, "path", None) or args.command
            print(f"error: {printable(str(where))}: {exc.strerror}", file=sys.stderr)
            return EXIT["input"]
        if os.environ.get("MOBITRACE_DEBUG"):
            raise
        print(f"error: unexpected {type(exc).__name__}: {_one_line(str(exc))} (a bug in mobitrace; "
              "please report it with the input)", file=sys.stderr)
        return EXIT["bug"]
    finally:
        signal.signal(signal.SIGTERM, previous)
    if status:
        return status
    if args.command in _NO_TIMINGS:
        return EXIT["ok"]
    # Keyed by the command line as dvc.yaml writes it, for the reproducibility page.
    timings.record(Path.cwd(), " ".join(["python -m mobitrace", *argv]), watch.seconds)
    return 0


_ENVIRONMENT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EMFILE, errno.ENFILE, errno.EROFS,
                       errno.EACCES, errno.EPERM, errno.ENOMEM, errno.EIO}


class _Terminated(BaseException):
    """SIGTERM, raised so that `finally` blocks clean up."""


def _terminated(signum, frame):
    raise _Terminated()


def _one_line(text: str) -> str:
    return " ".join(text.split("\n"))[:2000]


if __name__ == "__main__":
    sys.exit(main())
