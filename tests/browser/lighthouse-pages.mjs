// Lighthouse on every page given, one after another in one Chrome and one
// Node process (tests/e2e/test_browser.py). The CLI, once per page, started
// Node, loaded Lighthouse's config and launched Chrome each time (~4 s a page).
// Same settings as `lighthouse <url> --only-categories=accessibility,best-practices`
// (mobile form factor, default throttling), less the full-page screenshot,
// which only illustrates the HTML report and counts in no score.
// Usage: node lighthouse-pages.mjs "<chrome flags>" <url>...
// Prints {url: {categories: {id: score}, refs: {id: [audit id]}, audits: {id: [score, mode]}}}.
import lighthouse from "lighthouse";
import * as chromeLauncher from "chrome-launcher";

const [chromeFlags, ...urls] = process.argv.slice(2);
const chrome = await chromeLauncher.launch({ chromeFlags: chromeFlags.split(" ").filter(Boolean) });
const out = {};
try {
  for (const url of urls) {
    const { lhr } = await lighthouse(url, {
      port: chrome.port, logLevel: "error", output: "json",
      onlyCategories: ["accessibility", "best-practices"], disableFullPageScreenshot: true,
    });
    if (lhr.runtimeError) throw new Error(`${url}: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
    const cats = Object.values(lhr.categories);
    out[url] = {
      categories: Object.fromEntries(cats.map((c) => [c.id, c.score])),
      refs: Object.fromEntries(cats.map((c) => [c.id, c.auditRefs.map((r) => r.id)])),
      audits: Object.fromEntries(Object.values(lhr.audits).map((a) => [a.id, [a.score, a.scoreDisplayMode]])),
    };
  }
} finally {
  await chrome.kill();
}
process.stdout.write(JSON.stringify(out));
