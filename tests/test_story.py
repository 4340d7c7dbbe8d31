"""The chapters follow the story bible (story_bible.yml): places, pronouns, the ticket, the ways up.

Only the prose of markdown cells is checked, one test per rule, so that a failure names the rule
and the chapter.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BIBLE = yaml.safe_load((ROOT / "story_bible.yml").read_text())
CHAPTERS = {
    floor: ROOT / "book" / f"{entry['chapter']}.ipynb" for floor, entry in BIBLE["floors"].items() if "chapter" in entry
}
QUOTED = re.compile(r"\"[^\"]*\"")
INTRO = ROOT / "book" / "intro.md"


def prose(floor: int) -> str:
    """All markdown of a chapter, one string."""
    notebook = nbformat.read(CHAPTERS[floor], as_version=4)
    return "\n\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")


def scenes(floor: int) -> list[str]:
    """The story sections: the first section after the objectives, and the last before the references."""
    sections = re.split(r"\n(?=## )|^(?=## )", prose(floor))
    story = [s for s in sections if s.startswith("## ") and not s.startswith(("## References", "## Exercises"))]
    return [story[0], story[-1] if not story[-1].startswith("## Summary") else story[-2]]


def test_bible_lists_every_chapter() -> None:
    assert sorted(CHAPTERS) == list(range(1, max(CHAPTERS) + 1))
    assert all(path.exists() for path in CHAPTERS.values())


@pytest.mark.parametrize("floor", sorted(CHAPTERS))
def test_each_chapter_opens_in_its_place(floor: int) -> None:
    place = BIBLE["floors"][floor]["place"]
    name = place.removeprefix("the ")
    opening = scenes(floor)[0]
    assert name.lower() in opening.lower(), f"chapter {floor}'s opening scene never names {place}"


@pytest.mark.parametrize("floor", sorted(CHAPTERS))
def test_the_ticket_says_the_same_seat(floor: int) -> None:
    seat = BIBLE["hero"]["ticket"]
    text = prose(floor)
    patterns = [
        r"stamped \*\*(\d+)\*\*",
        r"stamped (\d+)",
        r"holds it up: seat (\d+)",
        r"ticket, still set to seat (\d+)",
    ]
    for pattern in patterns:
        for found in re.findall(pattern, text):
            assert int(found) == seat, f"chapter {floor}: the ticket reads {found}, the bible says {seat}"


def test_the_first_ticket_is_stamped() -> None:
    assert re.search(rf"stamped \*\*{BIBLE['hero']['ticket']}\*\*", prose(1)), "chapter 1 must show the stamped ticket"


@pytest.mark.parametrize("floor", sorted(CHAPTERS))
def test_apple_is_lowercase(floor: int) -> None:
    assert '"Apple"' not in prose(floor) and "“Apple”" not in prose(floor)


def she_characters() -> list[str]:
    return [c["name"].removeprefix("the ") for c in BIBLE["cast"] if c.get("pronoun") == "she"]


def it_characters() -> list[str]:
    return ["apple", *[c["name"] for c in BIBLE["cast"] if c.get("pronoun") == "it"]]


@pytest.mark.parametrize("floor", sorted(CHAPTERS))
def test_she_is_never_it(floor: int) -> None:
    """A paragraph about a "she" character, and about no "it" character, has no sentence starting "It <verb>s"."""
    for paragraph in prose(floor).split("\n\n"):
        if not any(name in paragraph for name in she_characters()):
            continue
        if any(name in paragraph for name in it_characters()):
            continue
        narration = QUOTED.sub('""', paragraph)
        wrong = re.search(r"(?:^|[.!?\"]\s+)It (?:\w+s)\b", narration)
        assert wrong is None, f"chapter {floor}: {wrong.group(0)!r} in a paragraph about {she_characters()}"


def test_cartographer_is_she() -> None:
    text = prose(5)
    assert re.search(r"\bShe\b|\bshe\b|\bher\b", text), "chapter 5 never calls the Cartographer she"
    assert "last seat it has drawn" not in text


def test_only_the_roof_above_the_edge() -> None:
    """Chapters 1-6 never put "apple" in the Observatory: it lies behind the dome's door (chapter 7)."""
    for floor in range(1, 7):
        text = prose(floor)
        assert not re.search(r"^#+ The Observatory", text, flags=re.M), f"chapter {floor} has an Observatory heading"
        assert not re.search(r"\bin the Observatory\b", text), f"chapter {floor} says 'in the Observatory'"


def test_the_ladder_and_the_hatch() -> None:
    """Chapter 5 ends at a ladder and a hatch, and chapter 6 opens through them."""
    closing_5, opening_6 = scenes(5)[1], scenes(6)[0]
    for word in BIBLE["ways_up"]["floor_5_to_6"]:
        assert word in closing_5, f"chapter 5's closing scene has no {word}"
        assert word in opening_6, f"chapter 6's opening scene has no {word}"


def test_last_words_are_said() -> None:
    """What chapter 6 remembers of the Cartographer, chapter 5 has her say."""
    remembered = re.search(r"The Cartographer's last words[^*]*\*([^*]+)\*", scenes(6)[0])
    assert remembered, "chapter 6 no longer quotes the Cartographer"
    closing = " ".join(re.sub(r"[^\w\s]", " ", scenes(5)[1]).split())
    for sentence in re.split(r"[.!?]", remembered.group(1)):
        words = " ".join(re.sub(r"[^\w\s]", " ", sentence).split())
        assert words in closing, f"chapter 5 never has the Cartographer say {words!r}"


def test_door_in_the_dome() -> None:
    """Chapter 6 hands over to the Observatory through a door in the dome; the tower is left in chapter 8."""
    closing = scenes(6)[1]
    assert "door" in closing and "dome" in closing and "Observatory" in closing and "Lumen" in closing
    last = BIBLE["leaves_tower_chapter"]
    for floor in sorted(CHAPTERS):
        leaves = "## Leaving the tower" in prose(floor)
        wrong = "never leaves" if floor == last else "already leaves"
        assert leaves == (floor == last), f"chapter {floor} {wrong} the tower"


def test_across_the_square_to_the_workshop() -> None:
    """Chapter 8 leaves the tower and sends "apple" across the square; chapter 9 opens there, in the Workshop,
    and holds the book's last scene."""
    way = BIBLE["ways_up"]["floor_8_to_9"]
    assert way in scenes(9)[0] and "tower" in scenes(9)[0], f"chapter 9's opening scene has no {way} or tower"
    assert way in scenes(8)[1] and "Workshop" in scenes(8)[1], f"chapter 8's closing scene has no {way} or Workshop"
    assert BIBLE["leaves_tower_chapter"] == 8 and BIBLE["final_scene_chapter"] == 9 == max(CHAPTERS)


def test_the_curtain_to_the_map_room() -> None:
    """Chapter 7 ends at the curtained archway beside the telescope, and chapter 8 opens behind it."""
    way = BIBLE["ways_up"]["floor_7_to_8"]
    assert way in scenes(7)[1], f"chapter 7's closing scene has no {way}"
    assert way in scenes(8)[0], f"chapter 8's opening scene has no {way}"


def sentences(text: str) -> list[str]:
    """The text cut at full stops, question and exclamation marks, with line breaks made spaces."""
    return [" ".join(s.split()) for s in re.split(r"(?<=[.!?])\s+", text)]


def test_the_road_runs_in_order() -> None:
    """The introduction names the places of the road in the bible's order: the tower before the Square."""
    text = " ".join(INTRO.read_text().split())
    found = [text.find(place.removeprefix("the ")) for place in BIBLE["road"]]
    assert -1 not in found, f"the introduction never names {BIBLE['road'][found.index(-1)]}"
    assert found == sorted(found), f"the introduction names the road out of order: {BIBLE['road']}"
    passed = [s.split(";")[0] for s in sentences(text) if "has passed" in s]
    assert passed, 'the introduction never says where "apple" has been'
    named = {place.split()[-1] for place in BIBLE["road"] if place.split()[-1] in passed[0]}
    assert named == {place.split()[-1] for place in BIBLE["passed_before_the_book"]}, passed[0]


@pytest.mark.parametrize("floor", [0, *sorted(CHAPTERS)])
def test_the_square_lies_ahead(floor: int) -> None:
    """No page says that "apple" has been in the Square: it is the next place after the tower."""
    text = INTRO.read_text() if floor == 0 else prose(floor)
    behind = re.compile(r"Square below|\bpassed\b[^.;]*(all three|Square)|\bin the Square\b[^.;]*\bheard\b")
    for sentence in sentences(text):
        wrong = behind.search(sentence)
        assert not wrong, f"{'the introduction' if floor == 0 else f'chapter {floor}'}: {sentence!r}"


def test_who_heard_the_rumour() -> None:
    """The introduction and chapter 1 tell the rumour the same way: who heard it, and where."""
    rumour = BIBLE["rumour"]
    village = rumour["where"].split(" the ")[-1].removeprefix("Embedding ")  # "Village"
    for name, text in (("the introduction", INTRO.read_text()), ("chapter 1", prose(1))):
        told = [s for s in sentences(text) if "rumour" in s]
        assert told, f"{name} never tells the rumour"
        first = told[0]
        assert "road from the" in first and village in first, f"{name}: {first!r} is not {rumour['where']}"
        for who in rumour["heard_by"]:
            assert who in first, f"{name}: {who} does not hear the rumour in {first!r}"


@pytest.mark.parametrize("floor", sorted(CHAPTERS))
def test_scenes_are_told_in_the_present(floor: int) -> None:
    """Every scene's speech is told in the present: "…," says Pip, never "…," said Pip."""
    assert BIBLE["tense"] == "present"
    verbs = "said|asked|replied|answered|called|added"
    for scene in scenes(floor):
        narration = QUOTED.sub('""', scene)  # quotations, and the quoted name "apple", become ""
        past = re.findall(rf'""\s*(?:{verbs})\b|\b(?:{verbs})\s+""', narration)
        assert not past, f"chapter {floor}'s scene narrates in the past tense: {past}"


@pytest.mark.parametrize("floor", sorted(CHAPTERS))
def test_no_one_is_named_in_an_opening_scene_before_their_floor(floor: int) -> None:
    """A keeper met on a later floor is not named in an earlier chapter's opening scene (Pip once named the
    roof's keepers on floor 5); a closing scene may hand them over."""
    met = {keeper for f, entry in BIBLE["floors"].items() if f <= floor for keeper in entry.get("keepers", [])}
    later = {keeper for f, entry in BIBLE["floors"].items() if f > floor for keeper in entry.get("keepers", [])} - met
    opening = scenes(floor)[0]
    for keeper in later:
        assert not re.search(rf"\b{re.escape(keeper)}\b", opening), f"chapter {floor} names {keeper} before floor"
