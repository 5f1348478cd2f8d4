// dome web view: follow a run while it goes on. The page is complete
// without this script; with it, each "ledger" event from the server
// reloads the page's <main> from the server (same-origin, server-rendered,
// already escaped HTML), and "end" stops following.
(function () {
  "use strict";
  var main = document.querySelector("main[data-live]");
  if (!main || !window.EventSource || !window.fetch || !window.DOMParser) { return; }
  var status = document.getElementById("live");
  var es = new EventSource(main.getAttribute("data-live"));
  var busy = false, again = false;
  function show(text) { if (status) { status.hidden = false; status.textContent = text; } }
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.href, { headers: { "Accept": "text/html" }, cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var next = doc.querySelector("main");
        if (next) { main.replaceChildren.apply(main, Array.prototype.slice.call(next.childNodes).map(function (n) { return document.importNode(n, true); })); }
        var link = doc.querySelector("a.permalink"), here = document.querySelector("a.permalink");
        if (link && here) { here.setAttribute("href", link.getAttribute("href")); }
      })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }
  show("live: following the run's ledger");
  es.addEventListener("ledger", function (e) {
    try { var m = JSON.parse(e.data); show("live: event " + m.sequence + " (" + (m.topics || []).slice(-1)[0] + ")"); } catch (x) {}
    refresh();
  });
  es.addEventListener("end", function () { es.close(); show("the run has ended"); refresh(); });
  es.addEventListener("error", function () { if (es.readyState === EventSource.CLOSED) { show("not following: the stream closed"); } });
})();
