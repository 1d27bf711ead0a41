"""mobitrace.book.chapter: the helpers every chapter notebook uses."""

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from mobitrace.book.chapter import ChapterOutputs, provenance_block


def test_provenance_block_names_the_kinds_the_text_names_in_a_fixed_order():
    block = provenance_block("Modeled from measured CPU time.", "analyze_x")
    assert block == "```{provenance} measured, modeled\n:stage: analyze_x\n\nModeled from measured CPU time.\n```"


def test_provenance_block_without_a_kind_is_refused():
    with pytest.raises(ValueError, match="names no kind"):
        provenance_block("Numbers.", "analyze_x")


def test_save_table_writes_six_significant_digits_and_unix_line_ends(tmp_path):
    out = ChapterOutputs(tmp_path / "results", "analyze_x")
    out.save_table(pd.DataFrame({"a": [1 / 3, 2.0], "b": ["x", "y"]}), "t")
    assert (tmp_path / "results" / "tables" / "t.csv").read_bytes() == b"a,b\n0.333333,x\n2,y\n"


def test_figure_writes_the_same_svg_bytes_twice(tmp_path):
    results = tmp_path / "data" / "results" / "s"
    out = ChapterOutputs(results, "analyze_x")
    for name in ("one", "two"):
        fig, ax = plt.subplots()
        ax.plot([0, 1], [1, 0])
        out.figure(fig, name, alt="A falling line.", caption="Look at the slope.")
    assert (results / "figures" / "one.svg").read_bytes() == (results / "figures" / "two.svg").read_bytes()


def test_figure_is_shown_with_escaped_alt_text_and_caption(tmp_path, capsys):
    from unittest import mock
    out = ChapterOutputs(tmp_path / "data" / "results" / "s", "analyze_x")
    fig, ax = plt.subplots()
    with mock.patch("IPython.display.display") as display:
        out.figure(fig, "f", alt='a "quoted" <alt>', caption="<script>look</script>")
    html_text = display.call_args.args[0].data
    assert 'src="../results/s/figures/f.svg"' in html_text
    assert 'alt="a &quot;quoted&quot; &lt;alt&gt;"' in html_text
    assert "<figcaption>&lt;script&gt;look&lt;/script&gt;</figcaption>" in html_text


@pytest.mark.parametrize("alt, caption", [("", "Look at the slope."), ("A falling line.", "")])
def test_a_figure_without_alt_text_or_caption_is_refused(tmp_path, alt, caption):
    out = ChapterOutputs(tmp_path / "data" / "results" / "s", "analyze_x")
    fig, _ = plt.subplots()
    with pytest.raises(ValueError, match="alt text and caption are required"):
        out.figure(fig, "f", alt=alt, caption=caption)
    assert not (tmp_path / "data" / "results" / "s" / "figures" / "f.svg").exists()
    plt.close(fig)


def test_findings_also_save_the_headline_rows_as_key_findings_csv_in_headline_order(tmp_path):
    from unittest import mock

    from mobitrace.book.chapter import KEY_FINDINGS_COLUMNS
    from tests.unit.helpers import three_claims
    claims = three_claims()
    out = ChapterOutputs(tmp_path / "results", "analyze_x")
    with mock.patch("IPython.display.display") as display:
        out.findings(claims, headline=["b", "a"], intervals={"a": (30.0, 42.5)})
    assert display.call_args.kwargs["metadata"]["mobitrace"]["role"] == "key-findings"
    saved = pd.read_csv(tmp_path / "results" / "tables" / "key_findings.csv")
    assert list(saved.columns) == KEY_FINDINGS_COLUMNS
    assert list(saved["claim_id"]) == ["b", "a"]
    assert list(saved["verdict"]) == ["not reproduced", "reproduced"]
    assert pd.isna(saved.loc[0, "artifact_low"]) and pd.isna(saved.loc[0, "artifact_high"])
    assert (saved.loc[1, "artifact_value"], saved.loc[1, "artifact_low"], saved.loc[1, "artifact_high"]) == (36.04, 30, 42.5)
    with pytest.raises(KeyError, match="zzz"):
        out.findings(claims, headline=["zzz"])


def test_figure_serves_its_phone_layout_below_600px_and_opens_full_size(tmp_path):
    from unittest import mock
    results = tmp_path / "data" / "results" / "s"
    out = ChapterOutputs(results, "analyze_x")
    fig, axes = plt.subplots(1, 3, figsize=(10, 3))
    with mock.patch("IPython.display.display") as display:
        out.figure(fig, "f", alt="Three panels.", caption="Look.")
    html_text = display.call_args.args[0].data
    assert '<source media="(max-width: 600px)" srcset="../results/s/figures/f-narrow.svg">' in html_text
    assert '<a class="mobitrace-figure-full" href="../results/s/figures/f.svg"' in html_text
    wide, narrow = ((results / "figures" / n).read_text() for n in ("f.svg", "f-narrow.svg"))
    width = lambda svg: float(svg.split('width="', 1)[1].split("pt", 1)[0])  # noqa: E731
    height = lambda svg: float(svg.split('height="', 1)[1].split("pt", 1)[0])  # noqa: E731
    assert width(narrow) < 0.6 * width(wide) and height(narrow) > 2 * height(wide)  # the panels stacked


def test_only_the_chapters_own_claims_table_is_folded_synthetic(tmp_path):
    from unittest import mock

    from mobitrace.book.chapter import site_href
    results = tmp_path / "data" / "results" / "s"
    out = ChapterOutputs(results, "analyze_x")
    frame = pd.DataFrame({"claim": ["a", "b"], "verdict": ["reproduced", "not reproduced"]})
    with mock.patch("IPython.display.display") as display:
        out.show(frame, "Claims", csv_href=site_href(results / "claims.csv"))
        out.show(frame, "Claims of another chapter", csv_href=site_href(tmp_path / "data/results/t/claims.csv"))
    own, other = (call.args[0].data for call in display.call_args_list)
    assert own.startswith('<details class="mobitrace-long-table">') and "<details" not in other


def test_reference_device_goes_first_or_is_refused_by_name():
    from mobitrace.book.chapter import reference_first
    assert reference_first(["synthetic-a", "synthetic-b", "synthetic-c"], "synthetic-b") == [
        "synthetic-b", "synthetic-a", "synthetic-c"]
    with pytest.raises(ValueError, match=r"reference_device 'synthetic-x' is not one of the devices"):
        reference_first(["synthetic-a"], "synthetic-x")


def test_params_name_a_captured_reference_device_where_a_chapter_needs_one(repo):
    import yaml
    params = yaml.safe_load((repo / "params.yaml").read_text())
    for section in ("cpu-gbps-measured", "transfer-tuning", "mptcp-dualband"):
        assert params[section]["reference_device"] in params[section]["devices"], section


def test_section_href_links_a_chapter_anchor_or_a_methods_page():
    from mobitrace.book.chapter import section_href
    assert section_href("mptcp-dualband", "mptcp-dualband-fig1") == "mptcp-dualband.html#mptcp-dualband-fig1"
    assert (section_href("mptcp-dualband", "mptcp-dualband-methods#mptcp-dualband-power")
            == "mptcp-dualband-methods.html#mptcp-dualband-power")
