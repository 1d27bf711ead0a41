"""priority-boost (Liang and Keshav): Welch tests of dynamic priority
boosting, from the published tables and re-run on a Linux host."""

from mobitrace.studies.registry import Chapter, Study, Thumbnail

STUDY = Study(
    slug="priority-boost",
    title="Dynamic Priority Boosting for Opportunistic Mobile Computing",
    venue="Liang and Keshav, University of Waterloo",
    order=2,
    params_section="priority-boost",
    chapters=(Chapter("priority-boost", "Published tables and a re-run", per_device=True,
                      inputs=("data/interim/priority-boost",)),),
    thumbnail=Thumbnail("priority-boost", "measured_vm-2core",
                        "Per-run transfer times (s) and audio jitter (µs) under each priority policy and load, "
                        "re-run on a 2-core virtual machine."),
    capture_kit="scripts/capture/priority_boost/run.py",
)
