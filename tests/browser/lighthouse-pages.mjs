// Lighthouse on every page given, one after another in one Chrome and one
// Node process (tests/e2e/test_browser.py). The CLI, once per page, started
// Node, loaded Lighthouse's config and launched Chrome each time (~4 s a page).
// Same settings as `lighthouse <url> --only-categories=accessibility,best-practices`
// (mobile form factor, default throttling), less the full-page screenshot,
// which only illustrates the HTML report and counts in no score, and shorter
// waits: the pauses after first paint and load (1 s each) keep performance
// metrics steady, which these categories do not read; the page must still be
// network- and CPU-quiet (MathJax done) for 500 ms, not 1 s, before the audits;
// no about:blank between pages and no storage reset (the book's files stay in
// Chrome's cache, as for a reader going from page to page). Scores, every
// audit's score and the small-text lists were identical on every page either way.
// Usage: node lighthouse-pages.mjs "<chrome flags>" <url>...
// Prints {url: {categories: {id: score}, refs: {id: [audit id]}, audits: {id: [score, mode]},
//               smallText: [element holding text under 12 px, math's sub- and superscripts aside]}}.
import lighthouse from "lighthouse";
import * as chromeLauncher from "chrome-launcher";

// Math's sub- and superscripts are smaller by convention: MathJax's MJX-* nodes,
// and the MathML tokens it keeps (visually hidden) for screen readers.
const isMath = (nodeName) => /^mjx-/i.test(nodeName) || /^(mi|mn|mo|ms|mtext)$/i.test(nodeName);

// The font-size audit's failing text (Lighthouse analyzes up to 50 nodes;
// text beyond them is named as such, so it never passes unseen).
function smallText({ failingTextLength, analyzedFailingNodesData: nodes }) {
  const counts = {};
  for (const { parentNode: { nodeName, attributes: attrs }, fontSize } of nodes) {
    if (isMath(nodeName)) continue;
    const i = attrs.indexOf("class");  // attributes: [name, value, name, value, ...]
    const key = `${nodeName}${i >= 0 ? "." + attrs[i + 1] : ""} (${fontSize.toFixed(1)} px)`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  const named = Object.entries(counts).map(([key, n]) => `${key} x${n}`);
  const unseen = failingTextLength - nodes.reduce((sum, n) => sum + n.textLength, 0);
  return unseen > 0 ? [...named, `${unseen} more characters`] : named;
}

const [chromeFlags, ...urls] = process.argv.slice(2);
const chrome = await chromeLauncher.launch({ chromeFlags: chromeFlags.split(" ").filter(Boolean) });
const out = {};
try {
  for (const url of urls) {
    const { lhr, artifacts } = await lighthouse(url, {
      port: chrome.port, logLevel: "error", output: "json",
      onlyCategories: ["accessibility", "best-practices"], disableFullPageScreenshot: true,
      pauseAfterFcpMs: 0, pauseAfterLoadMs: 0, networkQuietThresholdMs: 500, cpuQuietThresholdMs: 500,
      skipAboutBlank: true, disableStorageReset: true,
    });
    if (lhr.runtimeError) throw new Error(`${url}: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
    const cats = Object.values(lhr.categories);
    out[url] = {
      categories: Object.fromEntries(cats.map((c) => [c.id, c.score])),
      refs: Object.fromEntries(cats.map((c) => [c.id, c.auditRefs.map((r) => r.id)])),
      audits: Object.fromEntries(Object.values(lhr.audits).map((a) => [a.id, [a.score, a.scoreDisplayMode]])),
      smallText: smallText(artifacts.FontSize),
    };
  }
} finally {
  await chrome.kill();
}
process.stdout.write(JSON.stringify(out));
