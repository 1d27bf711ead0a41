"""The priority-boost methods page (notebooks/priority-boost-methods.py, a supplement of
the chapter): the published tables, the audit's method and
network-load table, the effect sizes and the re-run's per-device detail.

It makes the chapter's computations (mobitrace.studies.priority_boost.chapter) and
shows them; the chapter alone writes data/results/priority-boost/, which this page
links (`SupplementChapter`: it writes nothing).
"""

from __future__ import annotations

from mobitrace.book.chapter import SupplementChapter
from mobitrace.studies.priority_boost import chapter


class Chapter(SupplementChapter, chapter.Chapter):
    """The chapter's state and methods, showing without writing."""
