"""The study registry: the one list of studies.

Every folder of mobitrace/studies with a `study.yaml` (a `Study`: its
paper, chapters, params section, landing card and capture kit) is a study. dvc.yaml, book/_toc.yml, the landing page's
cards, the claims ledger's chapter list, the CLI's study choices and
`make capture-<study>` all follow this list (mobitrace.pipeline writes
dvc.yaml and _toc.yml from it; tests/unit/test_registry.py fails when a
checked-in file disagrees).
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType

import yaml


@dataclass(frozen=True)
class Chapter:
    """One chapter: notebooks/<name>.py, run by the stage analyze_<name>
    into book/chapters/<name>.ipynb and data/results/<name>/ (a supplement:
    by its chapter's stage, into book/chapters/<name>.ipynb only)."""

    name: str
    label: str                                   # its link on the landing card
    inputs: tuple[str, ...] = ()                 # data it reads besides its published numbers
    shared_params: tuple[str, ...] = ()          # other params.yaml sections it is given
    per_device: bool = False                     # has a section per captured device
    pages_per_device: bool = False               # writes a page per device (device_pages)
    # A supplement (methods, supplementary analyses) of the chapter named here:
    # it shows parts of that chapter's analysis, from its parameters, and
    # writes nothing (no results, no claims); the book nests it under that chapter.
    supplement_to: str | None = None

    @property
    def stage(self) -> str:
        """analyze_<name>; a supplement runs in its chapter's stage (one kernel for both)."""
        return "analyze_" + (self.supplement_to or self.name).replace("-", "_")

    @property
    def params_section(self) -> str:
        """Its params.yaml section: its own, or its main chapter's for a supplement."""
        return self.supplement_to or self.name

    @property
    def device_pages(self) -> str | None:
        """The folder of a per-device chapter's generated pages, one per
        device (book/chapters/<name>-devices/<device>.md), which its stage
        writes; None for other chapters."""
        return f"book/chapters/{self.name}-devices" if self.pages_per_device else None


@dataclass(frozen=True)
class Thumbnail:
    """The landing card's figure: data/results/<chapter>/figures/<name>.svg."""

    chapter: str
    name: str
    alt: str


@dataclass(frozen=True)
class Study:
    """What the pipeline, the book and the CLI need to know about a study.

    Its code is in mobitrace/studies/<package>/: `ingest.py` (raw captures
    -> data/interim/<slug>/<device>/) with `ingest(device_dir, out_dir)` and
    `validate_session(folder)`, its analyses and its pandera schemas. Its
    paper's numbers are in data/published/<slug>.yaml, its devices in
    params.yaml[<params_section>].devices, its capture kit in scripts/capture/.
    """

    slug: str
    title: str
    venue: str
    order: int                                   # position in the book
    params_section: str                          # the section listing `devices`
    chapters: tuple[Chapter, ...]
    thumbnail: Thumbnail
    capture_kit: str | None                      # path of the kit's entry point (None: no kit yet)
    # Per-device analysis (mobitrace.studies.<package>.device_analysis
    # `analyze(interim_dir, out_dir, params)`), run by the device's ingest
    # stage after the ingest, with the params keys it reads.
    device_analysis_params: tuple[str, ...] | None = None
    # The files a capture session may hold, relative to the session folder
    # (`*`: one run id; `name` and `name.gz` alike): the allow-list that keeps a
    # capture data only (mobitrace.core.capture_layout).
    capture_files: tuple[str, ...] = ("manifest.yaml",)
    # A small valid committed session the tests cut hostile inputs from
    # (tests/hostile), relative to the repository, and the runs they keep
    # (empty: the whole session). A study with a capture kit names one.
    test_capture: str | None = None
    test_capture_runs: tuple[str, ...] = ()
    package: str = field(default="", compare=False)

    @property
    def ingest_stage(self) -> str:
        """The one stage of a device: ingest_<package>, or ingest_analyze_<package>
        when the study has a per-device analysis, which that stage runs after
        the ingest in the same process (one Python start and one DVC stage a device)."""
        return ("ingest_" if self.device_analysis_params is None else "ingest_analyze_") + self.package

    @property
    def device_chapter(self) -> Chapter:
        """The chapter with a section per device (the last chapter with
        results, if none says)."""
        return next((c for c in self.chapters if c.per_device),
                    [c for c in self.chapters if not c.supplement_to][-1])

    def device_stages(self, device: str = "{device}") -> list[str]:
        """The stages that run for one device: its ingest stage."""
        return [f"{self.ingest_stage}@{device}"]

    def device_sources_stage(self, device: str) -> str:
        """The stage that runs for one device alone: a provenance box of that
        device's figure or table names it, so that it lists that device's
        capture, not every device's."""
        return f"{self.ingest_stage}@{device}"

    def summary_stages(self) -> list[str]:
        """The stages that read every device of the study: its per-device
        chapter's (which runs that chapter's supplements too)."""
        return [c.stage for c in self.chapters if c.per_device]

    def chapter_module(self, chapter: str) -> str:
        """The module of everything `chapter`'s notebook shows (its figures,
        tables for people, glued numbers, claims and findings): `chapter` for
        the chapter named as the study, `chapter_<rest>` for `<slug>-<rest>`
        (cpu-gbps-measured: chapter_measured). The notebook imports nothing
        else from the study."""
        if chapter == self.slug:
            return "chapter"
        if not chapter.startswith(self.slug + "-"):
            raise ValueError(f"chapter {chapter!r} of study {self.slug!r} is not named <slug> or <slug>-<rest>")
        return "chapter_" + chapter[len(self.slug) + 1:].replace("-", "_")

    def module(self, name: str) -> ModuleType:
        return importlib.import_module(f"mobitrace.studies.{self.package}.{name}")

    def folder(self) -> Path:
        return Path(__file__).parent / self.package

    def card(self) -> dict:
        """The landing page's card (mobitrace.book.landing)."""
        return {"name": self.slug, "title": self.title, "venue": self.venue,
                "chapters": [{"chapter": c.name, "label": c.label} for c in self.chapters if not c.supplement_to],
                "figure": {"chapter": self.thumbnail.chapter, "name": self.thumbnail.name,
                           "alt": self.thumbnail.alt}}


DESCRIPTION = "study.yaml"


def _load(folder: Path) -> Study:
    """A study folder's description, checked: unknown or missing keys are
    one line naming the file and the key."""
    from mobitrace.core.errors import InputError

    path = folder / DESCRIPTION
    doc = yaml.safe_load(path.read_text())
    fields = {f.name for f in dataclasses.fields(Study)} - {"package"}
    if not isinstance(doc, dict) or set(doc) - fields:
        raise InputError(path, None, sorted(set(doc) - fields)[0] if isinstance(doc, dict) else None,
                         f"only the keys {sorted(fields)}", doc if not isinstance(doc, dict) else "another key")
    try:
        chapters = tuple(Chapter(**{k: tuple(v) if isinstance(v, list) else v for k, v in c.items()})
                         for c in doc.pop("chapters"))
        thumbnail = Thumbnail(**doc.pop("thumbnail"))
        params = doc.pop("device_analysis_params", None)
        for key in ("capture_files", "test_capture_runs"):
            if key in doc:
                doc[key] = tuple(doc[key])
        mains = {c.name for c in chapters if not c.supplement_to}
        stray = [c.name for c in chapters if c.supplement_to and c.supplement_to not in mains]
        if stray:
            raise KeyError(f"chapter {stray[0]}: supplement_to names no chapter of the study")
        return Study(**doc, chapters=chapters, thumbnail=thumbnail,
                     device_analysis_params=None if params is None else tuple(params), package=folder.name)
    except (KeyError, TypeError) as exc:
        raise InputError(path, None, None, "a study description (see mobitrace.studies.registry.Study)",
                         str(exc)) from None


@cache
def studies() -> tuple[Study, ...]:
    """Every study (a folder of mobitrace/studies with a study.yaml), in book order."""
    found = [_load(d) for d in sorted(Path(__file__).parent.iterdir()) if (d / DESCRIPTION).is_file()]
    return tuple(sorted(found, key=lambda s: (s.order, s.slug)))


def by_slug() -> dict[str, Study]:
    return {s.slug: s for s in studies()}


def chapters(supplements: bool = False) -> list[Chapter]:
    """Every study chapter with results and claims (and, if `supplements`,
    every supplement after its chapter), in book order."""
    return [c for s in studies() for c in s.chapters if supplements or not c.supplement_to]
