"""The mptcp-dualband methods page (notebooks/mptcp-dualband-methods.py, a supplement of
the chapter): the capture and the runs set aside, the CPU
sources, the power model, the two optima side by side, the guideline's
encoding and the model's sensitivity to a wake-up floor.

It makes the chapter's computations (mobitrace.studies.mptcp_dualband.chapter) and
shows them; the chapter alone writes data/results/mptcp-dualband/, which this page
links (`SupplementChapter`: it writes nothing).
"""

from __future__ import annotations

from mobitrace.book.chapter import SupplementChapter
from mobitrace.studies.mptcp_dualband import chapter


class Chapter(SupplementChapter, chapter.Chapter):
    """The chapter's state and methods, showing without writing."""
