// Search as you type, for a page that works without it: the form's own GET answer (same page, same
// server-side escaping) replaces the results. No HTML is built here, and nothing but this origin is asked.
"use strict";
(function () {
  var input = document.getElementById("q");
  var results = document.getElementById("results");
  if (!input || !results || !window.fetch || !window.DOMParser) return;
  var timer = null;
  var asked = 0;
  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () {
      var mine = ++asked;
      var query = input.value.trim();
      var url = query ? "/?q=" + encodeURIComponent(query) : "/";
      fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } })
        .then(function (response) { return response.ok ? response.text() : null; })
        .then(function (html) {
          if (html === null || mine !== asked) return;
          var found = new DOMParser().parseFromString(html, "text/html").getElementById("results");
          var current = document.getElementById("results");
          if (found && current) current.replaceWith(document.importNode(found, true));
        })
        .catch(function () {});
    }, 200);
  });
})();
