// t3agent console: the little the pages need beyond htmx. No inline
// scripts (the CSP forbids them), no eval.
document.addEventListener("htmx:afterRequest", function (e) {
  var f = e.detail.elt;
  if (e.detail.successful && f && f.classList && f.classList.contains("reset-on-send")) {
    f.reset();
  }
});
