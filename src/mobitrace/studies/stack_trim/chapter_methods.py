"""The stack-trim methods page (notebooks/stack-trim-methods.py, a supplement of
the chapter): the captures and their run conditions, and the CPU power model.

It makes the chapter's computations (mobitrace.studies.stack_trim.chapter) and
shows them; the chapter alone writes data/results/stack-trim/, which this page
links (`SupplementChapter`: it writes nothing).
"""

from __future__ import annotations

from mobitrace.book.chapter import SupplementChapter
from mobitrace.studies.stack_trim import chapter


class Chapter(SupplementChapter, chapter.Chapter):
    """The chapter's state and methods, showing without writing."""
