"""sphinx_ext/single_scripts.py: an inline script listed twice by Sphinx is written once."""

from __future__ import annotations

from sphinx.builders.html._assets import _JavaScript

from sphinx_ext.single_scripts import once_each


def test_an_inline_script_listed_as_none_and_as_empty_is_kept_once():
    thebe = "const THEBE_JS_URL = 'x'"
    scripts = [
        _JavaScript("_static/doctools.js", priority=200),
        _JavaScript(None, body=thebe),
        _JavaScript("_static/sphinx-thebe.js", **{"async": "async"}),
        _JavaScript("", body=thebe),
        _JavaScript("", body="var other = 1"),
    ]
    kept = once_each(scripts)
    assert [s.attributes.get("body") for s in kept] == [None, thebe, None, "var other = 1"]
    assert kept[1] is scripts[1]  # the first copy, where it was


def test_different_scripts_are_all_kept():
    scripts = [_JavaScript("a.js"), _JavaScript("a.js", priority=800), _JavaScript("b.js"), _JavaScript("", body="1")]
    assert once_each(scripts) == scripts
