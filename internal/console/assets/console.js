// t3agent console: the little the pages need beyond htmx. No inline
// scripts (the CSP forbids them), no eval.
document.addEventListener("htmx:afterRequest", function (e) {
  var f = e.detail.elt;
  if (e.detail.successful && f && f.classList && f.classList.contains("reset-on-send")) {
    f.reset();
  }
});

// A conversation's stream announces its state first on every connection,
// the state the page already shows: skip an event whose state (the
// fields the fragment shows, as chat.go joins them in data-state) is the
// one rendered, so a half-typed reason or answer is not swapped away for
// nothing.
document.addEventListener("htmx:beforeRequest", function (e) {
  var cfg = e.detail.requestConfig;
  var ev = cfg && cfg.triggeringEvent;
  var elt = e.detail.elt;
  if (!ev || ev.type !== "sse:conversation" || !elt || elt.id !== "conv" || !ev.detail) {
    return;
  }
  var v;
  try {
    v = JSON.parse(ev.detail.data);
  } catch (x) {
    return;
  }
  var state = [v.status, v.updatedAt, v.totalCount, v.title, v.errorCode || "", v.errorMessage || "",
    v.decisionPending, v.runId || ""].join("|");
  if (state === elt.dataset.state) {
    e.preventDefault();
  }
});
