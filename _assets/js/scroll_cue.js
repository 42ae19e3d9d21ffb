// A visible cue on every box of the article that scrolls sideways (issue 31): a wide table, a
// long code line on a phone. Such a box gets the class blc-scroll-cue, and book.css fades the edge
// behind which more is hidden (blc-scroll-more-right, blc-scroll-more-left). The classes follow
// the window's size and the box's scrolling. window.blcScrollCue() re-marks the page at once (the
// browser test calls it after changing the window's size).
(function () {
  "use strict";
  const scrolls = el => {
    const s = getComputedStyle(el).overflowX;
    return s === "auto" || s === "scroll";
  };
  function mark(el) {
    const more = el.scrollWidth > el.clientWidth + 1;
    el.classList.toggle("blc-scroll-cue", more);
    el.classList.toggle("blc-scroll-more-right",
                        more && el.scrollLeft + el.clientWidth < el.scrollWidth - 1);
    el.classList.toggle("blc-scroll-more-left", more && el.scrollLeft > 1);
  }
  const watched = new WeakSet();
  function markAll() {
    const main = document.querySelector("main") || document.body;
    for (const el of main.querySelectorAll("*")) {
      if (!watched.has(el) && !scrolls(el)) continue;
      if (!watched.has(el)) {
        watched.add(el);
        el.addEventListener("scroll", () => mark(el), {passive: true});
      }
      mark(el);
    }
  }
  let pending = null;
  function later() {
    if (pending) clearTimeout(pending);
    pending = setTimeout(markAll, 150);
  }
  window.blcScrollCue = markAll;
  window.addEventListener("resize", later);
  window.addEventListener("load", () => {
    markAll();
    // MathJax typesets after the load event: mark again once it has.
    if (window.MathJax && MathJax.startup && MathJax.startup.promise)
      MathJax.startup.promise.then(markAll);
  });
})();
