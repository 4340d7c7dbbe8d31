"""The book's tools: scripts that read the chapter notebooks, run from the repository root.

Each runs as ``python -m tools.<name>``.

Scripts:

* ``python -m tools.execute_chapters``: executes chapters in an empty folder and saves them with tidy outputs
  (``make chapters``), or keeps their outputs for the site's build (``--cache``, ``make book``).
* ``python -m tools.tables``: writes the tables generated from the chapters' facts (README, CONTRIBUTING, the
  introduction, the instructor's guide) and ``book/exercise_list.md``; ``--check`` says which are stale.
* ``python -m tools.facts``: prints each chapter's facts; ``--sync-outcomes`` copies the objectives into them.
* ``python -m tools.new_chapter``: starts a chapter from the template, ``tools/templates/00_template.ipynb``.
* ``python -m tools.exercise_list``: writes ``book/exercise_list.md`` (every exercise, chapter by chapter).
* ``python -m tools.student_edition``: builds the site without solutions into ``_build/student/html``.
* ``python -m tools.pdf``: prints the whole book as one PDF into ``_build/pdf/`` from the chapters' cached outputs
  (``make pdf``; ``--edition student`` for the student edition).
* ``python -m tools.handouts``: writes ``student/notebooks/*.ipynb`` and ``student/handouts.zip``.
* ``python -m tools.grade_submissions FOLDER``: grades submitted notebooks, each in a sandbox, one CSV row per exercise.
* ``python -m tools.gradescope build``: one Gradescope autograder zip per chapter.
* ``python -m tools.colab_runtime``: makes (once per state of the library and pins) the Colab-like runtime in
  which the tests run the chapters.

What they share, one module a job:

* :mod:`tools.book`: the table of contents (parsed here only), the pages, the chapters, a chapter's number and title.
* :mod:`tools.facts`: each chapter's facts (floor, titles, question, outcomes, minutes, budget, answers) from its
  metadata.
* :mod:`tools.myst`: MyST directives in markdown text.
* :mod:`tools.exercises`: the exercises of a chapter, their gated solutions and their checkers.
* :mod:`tools.stubs`: the student version of a chapter, solutions replaced by stubs.
* :mod:`tools.giveaways`: the facts that answer an exercise, found where the page shows them before it asks.
* :mod:`tools.run_notebook`: executing a notebook in a fresh kernel in an empty folder.
* :mod:`tools.sandbox`: running a submission's code in a bubblewrap sandbox of its own (the grader, Gradescope).

The Sphinx extension that shows progress bars at their last state is not a tool: it lives in ``sphinx_ext/``.
"""
