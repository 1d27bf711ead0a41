// Fills the reproducibility page's build-machine section from
// _static/build-info.json. Text only (textContent), never HTML.
function fillBuildInfo() {
  const box = document.getElementById("build-info");
  if (!box) return;
  const cell = (row, text, tag) => {
    const el = document.createElement(tag || "td");
    el.textContent = text === null || text === undefined ? "–" : String(text);
    row.appendChild(el);
  };
  const table = (header, rows) => {
    const t = document.createElement("table");
    t.className = "mobitrace-table";
    const head = t.createTHead().insertRow();
    header.forEach((h) => cell(head, h, "th"));
    const body = t.createTBody();
    rows.forEach((r) => { const tr = body.insertRow(); r.forEach((c) => cell(tr, c)); });
    // In a box of its own that scrolls sideways, like the chapters' tables (tables.js).
    const box = document.createElement("div");
    box.className = "mobitrace-table-scroll";
    box.setAttribute("role", "region");
    box.setAttribute("tabindex", "0");
    box.setAttribute("aria-label", header.join(", "));
    box.appendChild(t);
    return box;
  };
  // From file:// the browser refuses fetch(): say so instead of logging an error.
  if (window.location.protocol === "file:") {
    box.textContent = "No build information when read from disk (open the book through a web server).";
    return;
  }
  fetch("_static/build-info.json")
    .then((r) => { if (!r.ok) throw new Error(r.status); return r.json(); })
    .then((info) => {
      box.replaceChildren(
        table(["fact", "value"], [
          ["Python", info.python + " (" + info.implementation + ")"],
          ["OS", info.os], ["kernel", info.kernel], ["machine", info.machine],
          ["CPU", info.cpu_model], ["CPU count", info.cpu_count],
        ]),
        table(["stage", "command", "wall time (s)", "finished (UTC)"],
          info.stages.map((s) => [s.stage, s.command, s.wall_s, s.finished_utc])),
      );
      document.dispatchEvent(new Event("mobitrace:tables"));
    })
    .catch(() => { box.textContent = "No build information (open the book through a web server)."; });
}
// Loaded in <head> on every page: wait for the body.
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", fillBuildInfo);
} else {
  fillBuildInfo();
}
