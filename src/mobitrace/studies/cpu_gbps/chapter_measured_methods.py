"""The cpu-gbps-measured methods page (notebooks/cpu-gbps-measured-methods.py,
a supplement of the chapter): the test bed and the two CPU sources, the
captures, the fitted lines, the throughput at 50% CPU and `/proc/stat`
against the precise source per device.

It makes the chapter's computations (mobitrace.studies.cpu_gbps.chapter_measured)
and shows them; the chapter alone writes data/results/cpu-gbps-measured/,
which this page links (`SupplementChapter`: it writes nothing).
"""

from __future__ import annotations

from mobitrace.book.chapter import SupplementChapter
from mobitrace.studies.cpu_gbps import chapter_measured


class Chapter(SupplementChapter, chapter_measured.Chapter):
    """The chapter's state and methods, showing without writing."""
