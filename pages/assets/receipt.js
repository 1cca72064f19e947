// Checks the receipt shown on a verification page: its Ed25519 signature
// over the RFC 8785 (JCS) form of every member but "signature", with the
// key its keyId names in the server's published JWKS, using WebCrypto.
// The page works without this script; only the check needs it.
"use strict";
(function () {
  const status = document.getElementById("receipt-status");
  const pre = document.getElementById("receipt-json");
  if (!status || !pre) return;
  const say = (text, ok) => {
    status.textContent = text;
    status.classList.remove("ok", "bad");
    status.classList.add(ok ? "ok" : "bad");
    status.dataset.result = ok ? "valid" : "invalid";
  };
  // RFC 8785: object members sorted by their UTF-16 code units, no
  // whitespace, ECMAScript number and string serialisation.
  const jcs = (v) => {
    if (v === null || typeof v !== "object") return JSON.stringify(v);
    if (Array.isArray(v)) return "[" + v.map(jcs).join(",") + "]";
    return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + jcs(v[k])).join(",") + "}";
  };
  const b64url = (s) => {
    const b = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4));
    return Uint8Array.from(b, (c) => c.charCodeAt(0));
  };
  (async () => {
    try {
      if (!crypto.subtle) throw new Error("this browser has no WebCrypto here (a secure context is needed)");
      const receipt = JSON.parse(pre.textContent);
      if (status.dataset.order && receipt.orderId !== status.dataset.order) throw new Error("the receipt names another order");
      const { signature, ...signed } = receipt;
      if (receipt.signatureAlgorithm !== "Ed25519" || !signature) throw new Error("not an Ed25519 receipt");
      const res = await fetch(status.dataset.jwks, { headers: { Accept: "application/json" } });
      if (!res.ok) throw new Error("the keys could not be fetched (HTTP " + res.status + ")");
      const jwks = await res.json();
      const jwk = (jwks.keys || []).find((k) => k.kid === receipt.keyId);
      if (!jwk) throw new Error("key " + receipt.keyId + " is not among the published keys");
      const key = await crypto.subtle.importKey("jwk", { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, { name: "Ed25519" }, false, ["verify"]);
      const ok = await crypto.subtle.verify({ name: "Ed25519" }, key, b64url(signature), new TextEncoder().encode(jcs(signed)));
      if (ok) say("Receipt signature valid: signed by key " + receipt.keyId + " for order " + receipt.orderId + ", " + receipt.currency + " " + (receipt.amountMicrousd / 1e6).toFixed(2) + ".", true);
      else say("Receipt signature INVALID: this receipt was not signed by the published key " + receipt.keyId + ".", false);
    } catch (e) {
      say("Receipt not checked: " + e.message + ".", false);
    }
  })();
})();
