// Tablebay console: the little the pages do in the browser. Every page works without it; it only asks before a
// deletion and copies snippets. Loaded from this server only (the Content-Security-Policy allows no inline
// script).
"use strict";

document.addEventListener("submit", function (event) {
  const button = event.submitter;
  const message = button && button.getAttribute("data-confirm");
  if (message && !window.confirm(message)) {
    event.preventDefault();
  }
});

document.addEventListener("click", function (event) {
  const button = event.target.closest("button[data-copy]");
  if (!button) {
    return;
  }
  const source = document.getElementById(button.getAttribute("data-copy"));
  if (source && navigator.clipboard) {
    navigator.clipboard.writeText(source.textContent).then(function () {
      button.textContent = "Copied";
      window.setTimeout(function () { button.textContent = "Copy"; }, 1500);
    });
  }
});
