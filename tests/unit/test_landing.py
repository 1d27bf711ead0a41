"""mobitrace.book.landing: the landing page's cards, on synthetic chapters."""

import re
from unittest import mock

import pandas as pd
import pytest

from mobitrace.core import claims as cl
from mobitrace.book import landing
from mobitrace.book.chapter import ChapterOutputs

ROW = dict(study="s", location="§1", unit="%", tolerance="t", basis="b", provenance="measured", section="s-x")


def _claims():
    return cl.claims_frame([
        {**ROW, "claim_id": "c", "claim": "from figures", "paper_relation": None, "paper_value": None,
         "artifact_value": None, "verdict": cl.NOT_CHECKABLE},
        {**ROW, "claim_id": "a", "claim": "CPU < 50% <script>", "paper_relation": "<", "paper_value": 50.0,
         "artifact_value": 36.04, "verdict": cl.REPRODUCED},
        {**ROW, "claim_id": "b", "claim": "gain 4x", "paper_relation": "~", "paper_value": 4.0,
         "artifact_value": 3.36, "unit": "x", "verdict": cl.NOT_REPRODUCED},
    ])


def _chapter(results, name, findings: bool):
    out = ChapterOutputs(results / name, "analyze_x")
    cl.write_claims(_claims(), results / name / "claims.csv")
    if findings:
        with mock.patch("IPython.display.display"):
            out.findings(_claims(), headline=["b", "a"], intervals={"b": (3.1, 3.6)})


STUDIES = [{"name": "s", "title": 'A "paper" <b>', "venue": "Conf '19",
            "chapters": [{"chapter": "pub", "label": "From the paper"},
                         {"chapter": "meas", "label": "Measured"}],
            "figure": {"chapter": "meas", "name": "fig<1>", "alt": 'Lines "of" CPU'}}]


def test_headline_comes_from_key_findings_in_headline_order(tmp_path):
    _chapter(tmp_path, "pub", findings=True)
    head = landing.headline_claims(tmp_path / "pub", n=2)
    assert list(head["claim_id"]) == ["b", "a"] and set(head["source"]) == {landing.FROM_KEY_FINDINGS}
    assert landing.ours_text(head.iloc[0]) == "3.36 [3.10, 3.60]×"


def test_without_key_findings_the_first_checkable_claims_stand_in_without_an_interval(tmp_path):
    _chapter(tmp_path, "meas", findings=False)
    assert not (tmp_path / "meas" / "tables" / "key_findings.csv").exists()
    head = landing.headline_claims(tmp_path / "meas", n=2)
    assert list(head["claim_id"]) == ["a", "b"]  # "c" is not checkable: skipped
    assert set(head["source"]) == {landing.FROM_CLAIMS}
    assert landing.ours_text(head.iloc[0]) == "36.0%"


def test_verdict_counts_name_every_verdict(tmp_path):
    _chapter(tmp_path, "pub", findings=False)
    assert landing.verdict_counts(tmp_path / "pub") == {cl.REPRODUCED: 1, cl.NOT_REPRODUCED: 1, cl.INCONCLUSIVE: 0,
                                                        cl.NOT_CHECKABLE: 1, cl.TESTBED_BOUND: 0,
                                                        cl.FOLLOWS_FROM_MODEL: 0}


def _thumbnail(results):
    (results / "meas" / "figures").mkdir(parents=True, exist_ok=True)
    (results / "meas" / "figures" / "fig<1>.svg").write_text("<svg/>")


def test_a_card_shows_paper_claim_result_counts_and_a_linked_thumbnail_all_escaped(tmp_path):
    _chapter(tmp_path, "pub", findings=True)
    _chapter(tmp_path, "meas", findings=False)
    _thumbnail(tmp_path)
    summary = landing.summary_frame(STUDIES, tmp_path)
    assert list(summary["chapter"]) == ["pub", "meas"]
    assert list(summary["source"]) == [landing.FROM_KEY_FINDINGS, landing.FROM_CLAIMS]
    text = landing.landing_html(STUDIES, summary)
    assert "<b>" not in text and "<script>" not in text and "&lt;script&gt;" in text
    assert 'A &quot;paper&quot; &lt;b&gt;' in text and "Conf &#x27;19" in text
    assert re.search(r'<a class="landing-thumb" href="meas.html"><img src="../results/meas/figures/'
                     r'fig&lt;1&gt;.svg" alt="Lines &quot;of&quot; CPU" loading="lazy"></a>', text)
    assert "~ 4×" in text and "3.36 [3.10, 3.60]×" in text and "&lt; 50%" in text and "36.0%" in text
    assert text.count('class="verdict verdict-not-reproduced">1 not reproduced') == 2
    assert text.count("All 3 claims:") == 2
    assert text.startswith('<div class="landing-grid">')


def test_ledger_summary_tallies_every_verdict_and_links_each_chapter():
    counts = pd.DataFrame({cl.REPRODUCED: [1, 2], cl.NOT_REPRODUCED: [0, 3], cl.NOT_CHECKABLE: [4, 0]},
                          index=["a<b", "c"])
    text = landing.ledger_summary_html(counts)
    assert "all 10 claims of 2 chapters" in text
    assert '<span class="verdict verdict-reproduced">3 reproduced</span>' in text
    assert '<a href="a&lt;b.html">a&lt;b</a>' in text and "<b>" not in text
    assert text.count("<tr><th scope=\"row\">") == 2
    # On a phone each cell is a block headed by its data-label (mobitrace.css): none may be bare.
    assert text.count("<td") == text.count(" data-label=") == 4


def test_verdict_bars_draw_one_bar_per_chapter_and_verdict():
    import matplotlib.pyplot as plt
    counts = pd.DataFrame({cl.REPRODUCED: [1, 2], cl.NOT_REPRODUCED: [0, 3], cl.NOT_CHECKABLE: [4, 0]},
                          index=["a", "c"])
    fig = landing.verdict_bars(counts)
    ax = fig.axes[0]
    widths = sorted(round(p.get_width()) for p in ax.patches if p.get_height() > 0)
    assert widths == [0, 0, 1, 2, 3, 4]
    assert ax.get_xlabel() == "claims (count)"
    plt.close(fig)


def test_a_thumbnail_the_chapter_does_not_save_is_named_in_one_error(tmp_path):
    _chapter(tmp_path, "pub", findings=True)
    _chapter(tmp_path, "meas", findings=False)
    with pytest.raises(FileNotFoundError, match=r"studies \(s\): thumbnail: expected a figure .* found no .*fig<1>.svg"):
        landing.summary_frame(STUDIES, tmp_path)


def test_categories_and_inconclusive_show_apart_only_where_they_occur():
    counts = pd.DataFrame({cl.REPRODUCED: [1, 2], cl.NOT_REPRODUCED: [0, 3], cl.NOT_CHECKABLE: [4, 0],
                           cl.FOLLOWS_FROM_MODEL: [0, 2]}, index=["a", "c"])
    text = landing.ledger_summary_html(counts)
    assert '<span class="verdict verdict-testbed-ok">2 follows from the model</span>' in text
    assert "inconclusive" not in text and "testbed-bound" not in text
    assert "all 12 claims of 2 chapters" in text


def test_the_synthetic_ledger_is_checked_once_and_a_bad_chapter_file_raises_its_own_error(tmp_path):
    for name in ("pub", "meas"):
        _chapter(tmp_path, name, findings=False)
    ledger, chapter_of, chapters = landing.read_ledger(STUDIES, tmp_path)
    assert list(ledger["claim_id"]) == ["pub/c", "pub/a", "pub/b", "meas/c", "meas/a", "meas/b"]
    assert chapters == ["pub", "meas"] and chapter_of == ["pub"] * 3 + ["meas"] * 3
    # a claim id twice in one file: the joined check fails, and the error raised is that file's own
    bad = tmp_path / "meas" / "claims.csv"
    bad.write_text(bad.read_text().replace(",b,gain 4x", ",a,gain 4x"))
    with pytest.raises(Exception) as per_file:
        cl.read_claims(bad)
    with pytest.raises(type(per_file.value)) as joined:
        landing.read_ledger(STUDIES, tmp_path)
    assert str(joined.value) == str(per_file.value)
