// Answers the 402 in challenges.json (issued by the Go code at a fixed
// time) with the official clients at that same time, and writes the
// payment headers they send to ../x402/ and ../mpp/. Loopback only.
//
//   go test ./payment/protocols -run TestInteropChallenges -write-challenges
//   cd payment/protocols/testdata/npm && npm ci && node generate.mjs
import { createServer } from "node:http";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { v2Client, v1Client, mppClient, wrapFetchWithPayment, x402HTTPClient } from "./clients.mjs";

const ch = JSON.parse(readFileSync(new URL("./challenges.json", import.meta.url)));
const fixed = Date.parse(ch.now);
// Sign windows relative to the challenge time: the clients read both
// Date.now() and new Date().
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(fixed);
    else super(...args);
  }
  static now() {
    return fixed;
  }
};

const captured = {};
const server = createServer((req, res) => {
  const path = req.url;
  const h = req.headers;
  const credential = h["payment-signature"] ?? h["x-payment"] ?? h["authorization"];
  if (credential) {
    captured[path] = credential;
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"ok":true}');
    return;
  }
  const headers = { "content-type": "application/problem+json", "cache-control": "no-store" };
  if (path === "/v2") headers["payment-required"] = ch.paymentRequired;
  if (path === "/mpp") headers["www-authenticate"] = ch.wwwAuthenticate.join(", ");
  res.writeHead(402, headers);
  res.end(ch.v1Body);
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${server.address().port}`;
const post = { method: "POST", headers: { "content-type": "application/json" }, body: ch.requestBody };

// x402 v2 through the fetch wrapper.
await wrapFetchWithPayment(fetch, v2Client())(`${base}/v2`, post);
const v2fetch = captured["/v2"];
delete captured["/v2"];

// x402 v2 by hand (the replay-test API).
const http = new x402HTTPClient(v2Client());
const r402 = await fetch(`${base}/v2`, post);
const required = http.getPaymentRequiredResponse((n) => r402.headers.get(n), await r402.json());
const headers = http.encodePaymentSignatureHeader(await http.createPaymentPayload(required));
await fetch(`${base}/v2`, { ...post, headers: { ...post.headers, ...headers } });
const v2manual = captured["/v2"];

// x402 v1 against a body-only 402.
await wrapFetchWithPayment(fetch, v1Client())(`${base}/v1`, post);

// MPP evm.
await mppClient().fetch(`${base}/mpp`, post);

server.close();
for (const [name, value] of [["v2 fetch", v2fetch], ["v2 manual", v2manual], ["v1", captured["/v1"]], ["mpp", captured["/mpp"]]]) {
  if (!value) throw new Error(`no ${name} credential captured`);
}
const dir = (d) => { mkdirSync(new URL(d, import.meta.url), { recursive: true }); return d; };
writeFileSync(new URL(dir("../x402/") + "official_v2_fetch.txt", import.meta.url), v2fetch + "\n");
writeFileSync(new URL("../x402/official_v2_manual.txt", import.meta.url), v2manual + "\n");
writeFileSync(new URL("../x402/official_v1.txt", import.meta.url), captured["/v1"] + "\n");
writeFileSync(new URL(dir("../mpp/") + "official_evm.txt", import.meta.url), captured["/mpp"] + "\n");
const lock = JSON.parse(readFileSync(new URL("./package-lock.json", import.meta.url)));
const versions = Object.fromEntries(
  ["@x402/core", "@x402/evm", "@x402/fetch", "mppx", "viem"].map((p) => [p, lock.packages[`node_modules/${p}`]?.version]),
);
writeFileSync(new URL("./fixtures.json", import.meta.url), JSON.stringify({ signedAt: ch.now, versions }, null, 2) + "\n");
console.log("wrote fixtures signed at", ch.now, "with", versions);
