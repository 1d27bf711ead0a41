"""Text from data files (device names, manifests, papers) is escaped in HTML."""

import pandas as pd

from mobitrace.book import reproducibility
from mobitrace.book.build import link, table_html

EVIL = '<script>alert("x")</script> & <b>'


def test_table_html_escapes_cells_headers_index_and_caption_synthetic():
    frame = pd.DataFrame({"device": [EVIL], EVIL: [1.5]}, index=[EVIL])
    out = table_html(frame, caption=EVIL, index=True).data
    assert "<script>" not in out and "<b>" not in out
    assert "&lt;script&gt;" in out
    assert out.count("&lt;script&gt;") == 5  # cell, header, index, caption, the region's label


def test_table_html_leaves_built_links_and_escapes_their_parts_synthetic():
    frame = pd.DataFrame({"claim": ["c"], "where": [link(EVIL, 'a.html#x"y')]})
    out = table_html(frame, html_columns=("where",)).data
    assert '<a href="a.html#x&quot;y">&lt;script&gt;' in out


def test_table_html_formats_numbers_and_missing_values_synthetic():
    out = table_html(pd.DataFrame({"x": [1.23456789, None]})).data
    assert ">1.23<" in out and ">–<" in out


def test_reproducibility_page_lists_packages_and_stages(repo, tmp_path):
    page = reproducibility.write_page(repo, tmp_path / "reproducibility.md").read_text()
    assert "| pandas |" in page and "| dvc |" in page
    assert "### `analyze_cpu_gbps`" in page
    assert "### `book`" not in page
    assert '<div id="build-info">' in page


def test_md_cell_escapes_html_and_pipes():
    assert reproducibility._md_cell("<a>|b") == "&lt;a&gt;\\|b"


def test_script_dedupe_keeps_the_builders_list_so_mathjax_still_lands():
    """The duplicate-script filter edits the builder's list in place: MathJax's
    handler runs after it and appends to that list on pages with math."""
    from types import SimpleNamespace

    from mobitrace.book.sphinxext import _dedupe_scripts

    scripts = [SimpleNamespace(filename="a.js", attributes={}), SimpleNamespace(filename="a.js", attributes={}),
               SimpleNamespace(filename="b.js", attributes={"defer": "defer"})]
    context = {"script_files": scripts}
    _dedupe_scripts(None, "page", "page.html", context, None)
    assert context["script_files"] is scripts and [s.filename for s in scripts] == ["a.js", "b.js"]
    scripts.append(SimpleNamespace(filename="mathjax/tex-chtml.js", attributes={}))
    assert context["script_files"][-1].filename == "mathjax/tex-chtml.js"


def test_the_root_redirect_gets_the_books_icon_once_synthetic(tmp_path):
    from mobitrace.book.build import redirect_with_icon
    index, config = tmp_path / "index.html", tmp_path / "_config.yml"
    config.write_text("html:\n  favicon: _static/favicon.svg\n")
    index.write_text('\n<meta http-equiv="Refresh" content="0; url=chapters/overview.html" />\n')
    redirect_with_icon(index, config)
    redirect_with_icon(index, config)  # a second call adds nothing
    assert index.read_text() == ('<link rel="icon" href="_static/favicon.svg">\n'
                                 '<meta http-equiv="Refresh" content="0; url=chapters/overview.html" />\n')
    page = tmp_path / "page.html"  # not a redirect: left as it is
    page.write_text("<html><head></head></html>")
    redirect_with_icon(page, config)
    assert page.read_text() == "<html><head></head></html>"


def test_named_sidebar_toggles_reuse_the_themes_cached_tree_synthetic():
    """The theme caches a page's navigation by the call's arguments and calls
    it once (with keywords) to see whether the sidebar is empty; the named
    wrapper must hit that cache, not build the whole tree again."""
    import functools

    from bs4 import BeautifulSoup

    from mobitrace.book import sphinx_a11y

    built = []

    @functools.cache
    def generate(kind, startdepth=1, **kwargs):
        built.append(kind)
        return BeautifulSoup('<li><a href="a.html">A</a><details><summary></summary></details></li>',
                             "html.parser")

    context = {"generate_toctree_html": generate}
    generate(kind="sidebar", startdepth=0, maxdepth=4)  # the theme's emptiness check
    sphinx_a11y._name_sidebar_toggles(None, "p", "page.html", context, None)
    soup = context["generate_toctree_html"](kind="sidebar", startdepth=0, maxdepth=4)
    assert built == ["sidebar"]
    assert soup.summary["aria-label"] == "Pages under A"


def test_the_site_keeps_the_mathjax_entry_point_in_use_and_its_components_synthetic(tmp_path):
    """Only the combined MathJax bundles no page loads leave the site: the
    one mathjax_path names stays, with the folders it loads components
    from (the menu's SVG renderer, the explorer); a failed build is left as is."""
    from types import SimpleNamespace

    from mobitrace.book import sphinxext

    mathjax = tmp_path / "_static" / "mathjax"
    (mathjax / "output").mkdir(parents=True)
    for name in ("tex-chtml.js", "tex-svg.js", "mml-chtml.js", "output/svg.js"):
        (mathjax / name).write_text("//")
    (tmp_path / "_static" / "locales" / "de").mkdir(parents=True)
    app = SimpleNamespace(outdir=str(tmp_path), config=SimpleNamespace(mathjax_path="mathjax/tex-chtml.js"))
    sphinxext._only_the_mathjax_entry_point_in_use(app, RuntimeError("failed"))
    assert (mathjax / "tex-svg.js").is_file()
    sphinxext._only_the_mathjax_entry_point_in_use(app, None)
    sphinxext._no_theme_catalogs(app, None)
    assert sorted(str(p.relative_to(mathjax)) for p in mathjax.rglob("*.js")) == ["output/svg.js", "tex-chtml.js"]
    assert not (tmp_path / "_static" / "locales").exists()


def test_the_search_index_stems_each_word_once_per_build_as_sphinx_does_synthetic():
    """The build-wide cache gives Sphinx's own stems (the same index), and a
    word seen on an earlier page is not stemmed again."""
    from sphinx.search.en import SearchEnglish

    from mobitrace.book.sphinxext import SearchEnglishStemmedOnce

    words = ["measured", "Measurements", "throughput", "running", "ran", "cores", "CPU", "energies"]
    plain, cached = SearchEnglish({}), SearchEnglishStemmedOnce({})
    assert [cached.stem(w) for w in words] == [plain.stem(w) for w in words]
    calls = []
    cached.stemmer.stemWord = lambda w: calls.append(w) or w
    cached.stem("measured"), cached.stem("lookup"), cached.stem("lookup")
    assert calls == ["lookup"]
