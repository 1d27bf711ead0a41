"""The artifact's RO-Crate metadata (ro-crate-metadata.json), written with
the `rocrate` library (ro-crate-py), so that Zenodo, InvenioRDM and workflow
registries can index what it holds: its data (raw captures: measured;
numbers transcribed from the papers: published), its pipeline (dvc.yaml, a
DVC workflow), its software, the papers it re-derives and its licence.

Two crates, each describing the folder it sits in (scripts/publish.py writes
them): the archive's (`make archive`: code, data, pipeline, software and the
built site under site/) and the site's (the book: its pages and results).
Their title, abstract, version, date, licence and papers come from
CITATION.cff, the one place they are written; the studies from the
registry. Every data entity names a path that exists in its folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from mobitrace.studies.registry import studies

VERSION = "1.1"        # RO-Crate 1.1: what Zenodo, InvenioRDM and WorkflowHub read
LICENCES = {"MIT": "https://spdx.org/licenses/MIT"}
DVC = "https://dvc.org"


def citation(repo: Path) -> dict:
    return yaml.safe_load((repo / "CITATION.cff").read_text(encoding="utf-8"))


def paper_id(reference: dict) -> str:
    """A paper's @id: its DOI as a URL, or a local identifier from its title."""
    if reference.get("doi"):
        return f"https://doi.org/{reference['doi']}"
    return "#paper-" + "-".join("".join(c if c.isalnum() else " " for c in reference["title"].lower()).split())


def study_papers(repo: Path, references: list[dict]) -> dict[str, dict]:
    """{study slug: its CITATION.cff reference}: the reference whose title
    data/published/<slug>.yaml cites."""
    found = {}
    for study in studies():
        cited = yaml.safe_load((repo / "data" / "published" / f"{study.slug}.yaml").read_text())["citation"]
        normal = " ".join(cited.lower().split())
        hits = [r for r in references if " ".join(r["title"].lower().split()) in normal]
        if len(hits) != 1:
            raise ValueError(f"data/published/{study.slug}.yaml: its paper is not one of CITATION.cff's references")
        found[study.slug] = hits[0]
    return found


def _person(author: dict) -> str:
    return author.get("name") or " ".join(p for p in (author.get("given-names"), author.get("family-names")) if p)


def _context(repo: Path):
    """A crate with the root's description, licence, authors and papers;
    returns (crate, {slug: paper entity}, software entity)."""
    from rocrate.model import ContextEntity
    from rocrate.rocrate import ROCrate

    cff = citation(repo)
    crate = ROCrate(version=VERSION)
    root = crate.root_dataset
    licence = crate.add(ContextEntity(crate, LICENCES[cff["license"]], properties={
        "@type": "CreativeWork", "name": f"{cff['license']} License", "identifier": cff["license"]}))
    authors = [crate.add(ContextEntity(crate, f"#author-{i}", properties={"@type": "Organization", "name": _person(a)}))
               for i, a in enumerate(cff["authors"], 1)]
    papers = {}
    for slug, ref in study_papers(repo, cff["references"]).items():
        props = {"@type": "ScholarlyArticle", "name": ref["title"],
                 "author": "; ".join(_person(a) for a in ref["authors"])}
        if ref.get("doi"):
            props["identifier"] = f"https://doi.org/{ref['doi']}"
        if ref.get("year"):
            props["datePublished"] = str(ref["year"])
        venue = (ref.get("conference") or ref.get("institution") or {}).get("name")
        if venue:
            props["publisher"] = venue
        papers[slug] = crate.add(ContextEntity(crate, paper_id(ref), properties=props))
    software = crate.add(ContextEntity(crate, cff["repository-code"], properties={
        "@type": "SoftwareSourceCode", "name": "mobitrace", "version": str(cff["version"]),
        "codeRepository": cff["repository-code"], "programmingLanguage": "Python", "license": licence}))
    root.properties().update({"name": cff["title"], "description": " ".join(cff["abstract"].split()),
                              "version": str(cff["version"]), "datePublished": str(cff["date-released"]),
                              "keywords": ", ".join(cff["keywords"])})
    root["license"] = licence
    root["author"] = authors
    root["citation"] = [papers[s.slug] for s in studies()]
    root["url"] = cff.get("url")
    return crate, papers, software


def archive_crate(repo: Path, site: str = "site/"):
    """The crate of `make archive`'s folder: code, data, pipeline, software
    (each that `repo` has), and the built site under `site`."""
    from rocrate.model import ComputerLanguage

    crate, papers, software = _context(repo)
    has = lambda path: (repo / path).exists()  # noqa: E731
    raw = []
    for study in studies():
        folder = f"data/raw/{study.slug}/"
        if (repo / folder).is_dir():
            raw.append(crate.add_dataset(dest_path=folder, properties={
                "name": f"Raw captures of {study.slug} (measured)", "about": papers[study.slug],
                "description": "One folder per device and capture session, as the capture kit wrote them "
                               "(manifest.yaml and the tools' native files); immutable."}))
    if raw:
        crate.add_dataset(dest_path="data/raw/", properties={
            "name": "Raw captures (measured)", "hasPart": raw,
            "description": "Measured on real machines by the project's capture kit; the pipeline never writes here."})
    published = [crate.add_file(dest_path=f"data/published/{s.slug}.yaml", properties={
        "name": f"Numbers stated in the {s.slug} paper (published)", "encodingFormat": "application/yaml",
        "citation": papers[s.slug],
        "description": "Each value transcribed with its unit, section, table or figure and the sentence it "
                       "comes from."}) for s in studies()]
    crate.add_dataset(dest_path="data/published/", properties={"name": "Published numbers", "hasPart": published})
    if has("dvc.yaml"):
        dvc = crate.add(ComputerLanguage(crate, "#dvc", properties={"name": "DVC", "url": {"@id": DVC}}))
        crate.add_workflow(dest_path="dvc.yaml", main=True, lang=dvc, properties={
            "name": "The pipeline: ingest, analyze (papermill), claims ledger, book",
            "description": "A DVC pipeline; `make` (dvc repro) rebuilds every result from data/raw and "
                           "data/published."})
    for path, name in (("dvc.lock", "The pipeline's lock: the hash of every input and output"),
                       ("params.yaml", "Every parameter the pipeline's stages read"),
                       ("requirements.txt", "The pinned Python packages of the software environment"),
                       ("CITATION.cff", "How to cite the artifact and the papers")):
        if has(path):
            crate.add_file(dest_path=path, properties={"name": name})
    if has("src"):
        crate.add_dataset(dest_path="src/", properties={
            "@type": ["Dataset", "SoftwareSourceCode"], "name": "The mobitrace package (Python)",
            "programmingLanguage": "Python", "isPartOf": software})
    if has("notebooks"):
        crate.add_dataset(dest_path="notebooks/", properties={"name": "The chapters' text notebooks (jupytext)"})
    crate.add_dataset(dest_path=site, properties={
        "name": "The built book (static site)", "description": "Every figure and table, with its provenance."})
    return crate


def site_crate(repo: Path):
    """The crate of the built site: its pages and the results it shows."""
    crate, _, software = _context(repo)
    crate.add_file(dest_path="index.html", properties={"name": "The book", "encodingFormat": "text/html"})
    crate.add_dataset(dest_path="chapters/", properties={"name": "The book's chapters and pages"})
    crate.add_dataset(dest_path="results/", properties={
        "name": "Tables (CSV) and figures (SVG) of every chapter",
        "description": "Measured, published or modeled, as each chapter's provenance lines say."})
    crate.root_dataset["isBasedOn"] = software
    return crate


def metadata(crate) -> bytes:
    """ro-crate-metadata.json's bytes: the same for the same inputs."""
    return (json.dumps(crate.metadata.generate(), indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
