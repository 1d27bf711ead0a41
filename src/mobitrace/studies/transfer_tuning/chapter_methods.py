"""The transfer-tuning methods page (notebooks/transfer-tuning-methods.py, a
supplement of the chapter): the testbed and the scaled datasets, the power
model and the energy functions.

It makes the chapter's computations (mobitrace.studies.transfer_tuning.chapter)
and shows them; the chapter alone writes data/results/transfer-tuning/, which
this page links (`SupplementChapter`: it writes nothing).
"""

from __future__ import annotations

from mobitrace.book.chapter import SupplementChapter
from mobitrace.studies.transfer_tuning import chapter


class Chapter(SupplementChapter, chapter.Chapter):
    """The chapter's state and methods, showing without writing."""
