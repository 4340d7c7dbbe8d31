"""sphinx_ext/test_markers.py: the tests' marker line is left out of the code a page shows, nothing else."""

from __future__ import annotations

from sphinx_ext.test_markers import without_marker


def test_the_marker_line_goes_and_the_code_stays():
    assert without_marker("# NBVAL_CHECK_OUTPUT\nprint(1)\nprint(2)") == "print(1)\nprint(2)"
    assert without_marker("print(1)  # NBVAL_CHECK_OUTPUT") == "print(1)  # NBVAL_CHECK_OUTPUT"
    assert without_marker("x = 1\n# NBVAL_CHECK_OUTPUT\n") == "x = 1\n# NBVAL_CHECK_OUTPUT\n"
    assert without_marker("") == ""
