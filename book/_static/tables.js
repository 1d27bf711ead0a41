/* Wide tables say that they scroll: a box whose table is wider than the
   screen gets the class `is-wide` (its first, key column then stays put,
   mobitrace.css) and a line naming how many columns lie to the right. */
(() => {
  const mark = () => document.querySelectorAll(".mobitrace-table-scroll").forEach((box) => {
    const table = box.querySelector("table");
    if (!table || !box.clientWidth) return;
    const wide = box.scrollWidth > box.clientWidth + 1;
    box.classList.toggle("is-wide", wide);
    let hint = box.previousElementSibling;
    if (!hint || !hint.classList.contains("mobitrace-scroll-hint")) {
      if (!wide) return;
      hint = document.createElement("p");
      hint.className = "mobitrace-scroll-hint";
      hint.setAttribute("aria-hidden", "true");
      box.before(hint);
    }
    const columns = table.rows.length ? table.rows[0].cells.length : 0;
    hint.textContent = `${columns} columns: swipe the table sideways →`;
    hint.hidden = !wide;
  });
  // build-info.js adds its tables later, then says so.
  const ready = () => { mark(); window.addEventListener("resize", mark); document.addEventListener("mobitrace:tables", mark); };
  document.readyState === "loading" ? document.addEventListener("DOMContentLoaded", ready) : ready();
})();
