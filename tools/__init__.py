"""The instructor's kit: scripts that read the chapter notebooks, run from the repository root.

* ``python -m tools.exercise_list``: writes ``book/exercise_list.md`` (every exercise, chapter by chapter).
* ``python -m tools.student_edition``: builds the site without solutions into ``_build/student/html``.
* ``python -m tools.handouts``: writes ``student/notebooks/*.ipynb`` and ``student/handouts.zip``.
* ``python -m tools.grade_submissions FOLDER``: runs submitted notebooks, tabulates the checkers' verdicts as CSV.

:mod:`tools.chapters` holds what they share: finding the chapters, their exercises and their solutions.
"""
