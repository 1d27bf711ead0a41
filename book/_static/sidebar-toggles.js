/* The visible ☰ and "contents" buttons open their drawers.
   pydata-sphinx-theme 0.17 (pydata-sphinx-theme issue #2451, still open) and
   sphinx-book-theme 1.3 (its issue #935) bind their handlers to the first
   `.primary-toggle` / `.secondary-toggle` in the page: the navbar's, which the
   book theme hides. The buttons readers see, in the article header, get none.
   A tap on any later toggle is passed to the first of its kind, so the themes'
   own handlers (drawer on a phone, collapse on a desktop) run unchanged. */
document.addEventListener("click", (event) => {
  for (const kind of [".primary-toggle", ".secondary-toggle"]) {
    const tapped = event.target.closest(kind);
    const bound = document.querySelector(kind);
    if (tapped && bound && tapped !== bound) {
      event.preventDefault();
      event.stopPropagation();
      bound.click();
      return;
    }
  }
}, true);
