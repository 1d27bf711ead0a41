"""A figure given as a drawing function (ChapterOutputs.figure): the chapter
saves the same bytes as from the figure itself; its supplement, which shows
the chapter's file, does not draw it, and still refuses a figure the chapter
did not save. A figure given as the path of an SVG an earlier stage saved is
copied byte for byte, and a supplement refuses one that differs from its
chapter's."""

from unittest import mock

import matplotlib.pyplot as plt
import pytest

from mobitrace.book.chapter import ChapterOutputs, ShownOutputs


def falling_line():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    return fig


def test_a_drawing_function_saves_the_bytes_its_figure_saves(tmp_path):
    open_before = set(plt.get_fignums())  # other tests in this process may leave figures open
    out = ChapterOutputs(tmp_path / "results", "analyze_x")
    out.figure(falling_line(), "drawn", alt="A falling line.", caption="Look at the slope.")
    out.figure(falling_line, "lazy", alt="A falling line.", caption="Look at the slope.")
    figures = tmp_path / "results" / "figures"
    assert (figures / "lazy.svg").read_bytes() == (figures / "drawn.svg").read_bytes()
    assert set(plt.get_fignums()) == open_before  # both figures were closed once saved


def test_a_supplement_shows_its_chapters_file_without_drawing(tmp_path):
    results = tmp_path / "data" / "results" / "s"
    ChapterOutputs(results, "analyze_x").figure(falling_line, "f", alt="A falling line.", caption="Look.")
    draw = mock.Mock(side_effect=falling_line)
    with mock.patch("IPython.display.display") as display:
        ShownOutputs(results, "analyze_x").figure(draw, "f", alt="A falling line.", caption="Look.")
    draw.assert_not_called()
    assert 'src="../results/s/figures/f.svg"' in display.call_args.args[0].data


def test_a_supplement_refuses_a_figure_its_chapter_did_not_save(tmp_path):
    draw = mock.Mock(side_effect=falling_line)
    with pytest.raises(FileNotFoundError, match="its chapter saved no such figure"):
        ShownOutputs(tmp_path / "results", "analyze_x").figure(draw, "f", alt="A falling line.", caption="Look.")
    draw.assert_not_called()


def test_a_saved_svg_is_shown_as_a_byte_identical_copy_without_drawing(tmp_path):
    stage = ChapterOutputs(tmp_path / "data" / "results" / "device", "analyze_device")
    stage.figure(falling_line, "figure1", alt="A falling line.", caption="Look.")
    saved = tmp_path / "data" / "results" / "device" / "figures" / "figure1.svg"
    results = tmp_path / "data" / "results" / "s"
    with mock.patch("IPython.display.display") as display, mock.patch("matplotlib.figure.Figure.savefig") as savefig:
        ChapterOutputs(results, "analyze_x").figure(saved, "f", alt="A falling line.", caption="Look.")
    savefig.assert_not_called()
    assert (results / "figures" / "f.svg").read_bytes() == saved.read_bytes()
    assert 'src="../results/s/figures/f.svg"' in display.call_args.args[0].data


def test_a_supplement_refuses_a_saved_svg_unlike_its_chapters(tmp_path):
    results = tmp_path / "data" / "results" / "s"
    ChapterOutputs(results, "analyze_x").figure(falling_line, "f", alt="A falling line.", caption="Look.")
    other = tmp_path / "other.svg"
    other.write_text("<svg/>")
    with mock.patch("IPython.display.display"):
        ShownOutputs(results, "analyze_x").figure(results / "figures" / "f.svg", "f", alt="A falling line.",
                                                  caption="Look.")
        with pytest.raises(ValueError, match="its chapter saved another figure"):
            ShownOutputs(results, "analyze_x").figure(other, "f", alt="A falling line.", caption="Look.")
        with pytest.raises(FileNotFoundError, match="its chapter saved no such figure"):
            ShownOutputs(results, "analyze_x").figure(other, "g", alt="A falling line.", caption="Look.")
