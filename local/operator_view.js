// The live operator view: fetch the figures and charts again every few seconds and show them.
// Served from the view's own origin; the server draws the charts (inline SVG), so all this
// does is swap the fragment in and say when the room could not be reached.
"use strict";

(() => {
  const live = document.getElementById("live");
  const every = Number(live.dataset.refreshSeconds) * 1000;

  const sayUnreachable = () => {
    const updated = live.querySelector(".updated");
    if (updated) {
      updated.textContent = "The room does not answer; trying again in a few seconds.";
    }
  };

  const refresh = async () => {
    try {
      const answer = await fetch("charts", { cache: "no-store", credentials: "omit" });
      if (answer.ok) {
        live.innerHTML = await answer.text();
      } else {
        sayUnreachable();
      }
    } catch {
      sayUnreachable();
    }
    setTimeout(refresh, every);
  };

  setTimeout(refresh, every);
})();
