"""Tables for people (mobitrace.book.build.table_html) and the key-findings block
(mobitrace.book.chapter.findings_html), on synthetic frames."""

import re

import pandas as pd

from mobitrace.book.build import LONG_TABLE_ROWS, table_html, with_interval
from mobitrace.book.chapter import findings_html, site_href
from tests.unit.helpers import three_claims


def _cells(html_text: str) -> list[str]:
    return re.findall(r"<td[^>]*>(.*?)</td>", html_text)


def test_columns_are_formatted_for_people_synthetic():
    frame = pd.DataFrame({"device": ["a"], "rate (Mbps)": [2000.0], "p_holm": [1e-7], "n": [10],
                          "cpu (%)": [8e1]})
    text = table_html(frame, caption="T").data
    assert _cells(text) == ["a", "2,000", "&lt; 0.0001", "10", "80"]
    assert "e+0" not in text and "<caption>T</caption>" in text


def test_every_string_is_escaped_and_the_table_scrolls_in_its_box_synthetic():
    frame = pd.DataFrame({"<script>x</script>": ['"><img src=x onerror=alert(1)>']})
    text = table_html(frame, caption="<b>cap</b>").data
    assert "<script>" not in text and "<img" not in text and "<b>" not in text
    assert text.startswith('<div class="mobitrace-table-scroll" role="region" tabindex="0"')


def test_long_tables_collapse_with_the_csv_one_click_away_synthetic():
    frame = pd.DataFrame({"x": range(LONG_TABLE_ROWS + 1)})
    text = table_html(frame, caption="Long", csv_href="../results/s/tables/long.csv").data
    assert "<details" in text and f"{LONG_TABLE_ROWS + 1} rows" in text
    assert 'href="../results/s/tables/long.csv"' in text
    assert "<details" not in table_html(frame.head(LONG_TABLE_ROWS)).data


def test_intervals_join_into_one_column_synthetic():
    frame = pd.DataFrame({"slope": [3.1234], "lo": [2.41], "hi": [3.9234]})
    shown = with_interval(frame, "slope", "lo", "hi", label="slope [95% CI]")
    assert list(shown.columns) == ["slope [95% CI]"] and shown.iloc[0, 0] == "3.12 [2.41, 3.92]"


def test_findings_show_paper_ours_with_interval_and_a_badge_synthetic():
    text = findings_html(three_claims(), ["b", "a"], intervals={"a": (30.0, 42.5)})
    assert text.index("gain 4x") < text.index("CPU &lt; 50%")  # the headline order
    assert "&lt;script&gt;" in text and "<script>" not in text
    assert "36.0 [30.0, 42.5]%" in text and "~ 4×" in text and "3.36×" in text
    assert 'class="verdict verdict-not-reproduced">not reproduced' in text
    assert "1 reproduced" in text and "1 not checkable" in text


def test_findings_refuse_an_unknown_headline_claim_synthetic():
    import pytest
    with pytest.raises(KeyError, match="zzz"):
        findings_html(three_claims(), ["zzz"])


def test_site_links_point_from_a_chapter_page_into_the_copied_results():
    assert site_href("data/results/stack-trim/tables/x.csv") == "../results/stack-trim/tables/x.csv"


def test_mixed_columns_flags_lists_and_missing_read_for_people_synthetic():
    """A transposed table's columns hold numbers among text: each number is
    rounded (no float noise), flags read yes / no, lists are joined."""
    frame = pd.DataFrame({"quantity": ["slope", "pinned", "CPUs", "none"],
                          "Pixel 2": [19.999999999999996, True, [1, 2], None]})
    cells = _cells(table_html(frame).data)
    assert cells[1::2] == ["20.0", "yes", "1, 2", "–"]
    assert not re.search(r"\d\.\d{9,}", table_html(frame).data)


def test_internal_column_names_become_reader_labels_synthetic():
    from mobitrace.book.build import reader_label
    assert reader_label("slope_pct_per_gbps") == "slope (% per Gbps)"
    assert reader_label("cpu_pct_at_12.8gbps") == "CPU at 12.8 Gbps (%)"
    assert reader_label("gbps_at_50pct_cpu") == "Gbps at 50% CPU"
    assert reader_label("rx_active_mw") == "Rx active (mW)"
    assert reader_label("rate (Mbps)") == "rate (Mbps)" and reader_label("CONFIG_HZ") == "CONFIG_HZ"
    text = table_html(pd.DataFrame({"intercept_pct": [1.5], "x": [2.0]})).data
    assert "intercept (%)" in text and "intercept_pct" not in text


def test_a_one_row_table_of_many_fields_reads_down_synthetic():
    frame = pd.DataFrame([{f"field {i}": i * 1.5 for i in range(8)}])
    text = table_html(frame, caption="One run").data
    assert "mobitrace-fields" in text and text.count('<th scope="row">') == 8 and "<thead>" not in text
    assert "mobitrace-fields" not in table_html(frame.iloc[:, :3]).data


def test_a_column_of_magnitudes_far_apart_shows_significant_figures_synthetic():
    """A derived-ratio column (a difference in Mbps beside ratios) shows each
    value to 3 figures, not 373.88 beside 0.23; a column of like magnitudes
    shares its decimals."""
    from mobitrace.book.build import format_column

    assert format_column(pd.Series([3.36066, 0.22875, 0.59, 373.88]), "value") == ["3.36", "0.229", "0.590", "374"]
    assert format_column(pd.Series([2.7654, 5.49]), "value") == ["2.77", "5.49"]


def test_verdicts_and_categories_read_as_badges_synthetic():
    from mobitrace.book.chapter import badge_html
    from mobitrace.core import claims as cl

    assert badge_html(cl.NOT_REPRODUCED) == '<span class="verdict verdict-not-reproduced">not reproduced</span>'
    assert badge_html(cl.EVIDENCE, "category") == '<span class="verdict verdict-evidence">evidence</span>'
    assert 'verdict-testbed-off">testbed-bound<' in badge_html(cl.TESTBED_BOUND, "category")
    assert badge_html(float("nan"), "category") == "–"
