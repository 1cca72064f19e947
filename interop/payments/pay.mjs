// Pays a dev-mode assay server with the official clients and reports one
// JSON line per (client, target). Run by discovery/interop_payments_test.go:
//
//   node pay.mjs '<config JSON>'
//
// config: {"origin": "http://127.0.0.1:PORT", "jwks": "<JWKS URL>",
//          "targets": [{"name", "method", "url", "body"?, "amount"}]}
//
// For every target and every client (x402 v2 through the fetch wrapper, x402
// v2 by hand, x402 v1 through the fetch wrapper against the v1 body, the
// legacy x402 1.x SDK — x402-fetch 1.2.0 with x402 1.2.0 —, mppx evm charge)
// it checks: 200; X-Agentic-Order-Id/-Token/-Receipt-Id; the protocol's
// settlement header; the signed receipt read back with the order token
// verifies with the published JWKS (Ed25519 over RFC 8785 JSON) and names
// the order, the amount and the SHA-256 of the bytes received; presenting
// the same payment again for the same request returns the same purchase
// (same bytes, order and receipt, X-Agentic-Idempotent-Replay) with a fresh
// order token that replaces the first; and for another request it is
// refused.
import { createHash, createPublicKey, verify } from "node:crypto";
import { privateKeyToAccount } from "viem/accounts";
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { x402HTTPClient } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactEvmSchemeV1 } from "@x402/evm/exact/v1/client";
import { Mppx, evm } from "mppx/client";
import { Receipt } from "mppx";
import { wrapFetchWithPayment as legacyWrapFetch, createSigner as legacyCreateSigner } from "x402-fetch";

// Public Hardhat/Anvil key #0: test funds only, and nothing settles in dev mode.
const TEST_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const account = privateKeyToAccount(TEST_KEY);
const config = JSON.parse(process.argv[2]);

const PAYMENT_HEADERS = ["payment-signature", "x-payment", "authorization"];

// recordingFetch remembers the payment header of the last request it sent.
function recordingFetch(inner = fetch) {
  const rec = { header: null, value: null };
  const f = async (input, init) => {
    const req = new Request(input, init);
    for (const h of PAYMENT_HEADERS) {
      const v = req.headers.get(h);
      if (v) {
        rec.header = h;
        rec.value = v;
      }
    }
    return inner(req);
  };
  return [f, rec];
}

// v1Only hides the x402 v2 header of 402 answers: what a v1-only server
// (or a proxy that drops unknown headers) shows the client.
async function v1Only(input, init) {
  const res = await fetch(input, init);
  if (res.status !== 402) return res;
  const headers = new Headers(res.headers);
  headers.delete("payment-required");
  headers.delete("www-authenticate");
  return new Response(await res.arrayBuffer(), { status: res.status, statusText: res.statusText, headers });
}

function init(t, extra = {}) {
  const headers = { ...extra };
  const out = { method: t.method, headers };
  if (t.body !== undefined && t.body !== null) {
    headers["content-type"] = "application/json";
    out.body = t.body;
  }
  return out;
}

// jcs serialises JSON per RFC 8785 for the values receipts hold (strings,
// integers, booleans, null, objects, arrays).
function jcs(v) {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return "[" + v.map(jcs).join(",") + "]";
  return "{" + Object.keys(v).sort().filter((k) => v[k] !== undefined).map((k) => JSON.stringify(k) + ":" + jcs(v[k])).join(",") + "}";
}

let jwks;
async function keys() {
  if (!jwks) {
    const res = await fetch(config.jwks);
    if (res.status !== 200) throw new Error(`JWKS answered ${res.status}`);
    jwks = await res.json();
  }
  return jwks;
}

// checkReceipt reads the order with its token and verifies its receipt.
async function checkReceipt(orderId, token, bodyBytes, amount) {
  const res = await fetch(`${config.origin}/v1/orders/${encodeURIComponent(orderId)}`, { headers: { "x-agentic-order-token": token } });
  if (res.status !== 200) return { ok: false, why: `order lookup answered ${res.status}: ${await res.text()}` };
  const order = await res.json();
  const receipt = order.receipt;
  if (!receipt || typeof receipt !== "object") return { ok: false, why: "the order has no receipt" };
  const { signature, ...signed } = receipt;
  const jwk = (await keys()).keys.find((k) => k.kid === receipt.keyId);
  if (!jwk) return { ok: false, why: `no published key ${receipt.keyId}` };
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: "jwk" });
  const sigOk = verify(null, Buffer.from(jcs(signed)), key, Buffer.from(signature, "base64url"));
  const sha = createHash("sha256").update(bodyBytes).digest("hex");
  const problems = [];
  if (!sigOk) problems.push("signature does not verify");
  if (receipt.orderId !== orderId) problems.push(`receipt names order ${receipt.orderId}`);
  if (receipt.resultSha256 !== sha) problems.push(`resultSha256 ${receipt.resultSha256} != ${sha}`);
  if (String(receipt.amountMicrousd) !== String(amount)) problems.push(`amount ${receipt.amountMicrousd} != ${amount}`);
  // A tampered copy must fail.
  const tampered = { ...signed, amountMicrousd: Number(receipt.amountMicrousd) + 1 };
  if (verify(null, Buffer.from(jcs(tampered)), key, Buffer.from(signature, "base64url"))) problems.push("a tampered receipt verifies");
  return { ok: problems.length === 0, why: problems.join("; "), receiptId: receipt.receiptId, protocol: receipt.paymentProtocol, dev: receipt.dev };
}

function settlement(res) {
  const x = res.headers.get("payment-response") ?? res.headers.get("x-payment-response");
  if (x) return { kind: "x402", value: decodePaymentResponseHeader(x) };
  const m = res.headers.get("payment-receipt");
  if (m) return { kind: "mpp", value: Receipt.deserialize(m) };
  return null;
}

async function report(client, t, res, rec, extra = {}) {
  const bytes = Buffer.from(await res.arrayBuffer());
  const out = { client, target: t.name, status: res.status, ...extra };
  out.orderId = res.headers.get("x-agentic-order-id");
  out.hasToken = Boolean(res.headers.get("x-agentic-order-token"));
  out.receiptId = res.headers.get("x-agentic-receipt-id");
  out.settlement = settlement(res);
  if (res.status !== 200) out.body = bytes.toString("utf8").slice(0, 500);
  if (res.status === 200 && out.orderId && out.hasToken) {
    const r = await checkReceipt(out.orderId, res.headers.get("x-agentic-order-token"), bytes, t.amount);
    out.receiptValid = r.ok;
    out.receiptProblem = r.why;
    out.receiptMatchesHeader = r.receiptId === out.receiptId;
    out.receiptProtocol = r.protocol;
    out.receiptDev = r.dev;
  }
  // The very same payment header again, for the same request: the same
  // purchase with a fresh token; the first token stops working.
  if (rec && rec.value) {
    const again = await fetch(t.url, init(t, { [rec.header]: rec.value }));
    const againBytes = Buffer.from(await again.arrayBuffer());
    out.replayStatus = again.status;
    out.replayHeader = rec.header;
    out.replayFlag = again.headers.get("x-agentic-idempotent-replay");
    out.replaySameBytes = againBytes.equals(bytes);
    out.replaySameOrder = again.headers.get("x-agentic-order-id") === out.orderId;
    out.replaySameReceipt = again.headers.get("x-agentic-receipt-id") === out.receiptId;
    if (again.status !== 200) out.replayBody = againBytes.toString("utf8").slice(0, 300);
    const fresh = again.headers.get("x-agentic-order-token");
    const first = res.headers.get("x-agentic-order-token");
    if (fresh && first && out.orderId) {
      out.freshTokenReads = (await orderStatus(out.orderId, fresh)) === 200;
      out.oldTokenReads = (await orderStatus(out.orderId, first)) === 200;
    }
    // For another request: refused.
    const other = await fetch(t.otherUrl ?? t.url, init({ ...t, body: t.otherBody ?? t.body }, { [rec.header]: rec.value }));
    out.otherStatus = other.status;
    out.otherError = other.headers.get("payment-required") ? JSON.parse(Buffer.from(other.headers.get("payment-required"), "base64").toString("utf8")).error : null;
    await other.arrayBuffer();
  }
  console.log(JSON.stringify(out));
}

async function orderStatus(orderId, token) {
  const res = await fetch(`${config.origin}/v1/orders/${encodeURIComponent(orderId)}`, { headers: { "x-agentic-order-token": token } });
  await res.arrayBuffer();
  return res.status;
}

async function run(client, t, fn) {
  try {
    await fn();
  } catch (e) {
    console.log(JSON.stringify({ client, target: t.name, status: 0, error: String(e && e.stack ? e.stack : e) }));
  }
}

for (const t of config.targets) {
  await run("x402-v2-fetch", t, async () => {
    const [f, rec] = recordingFetch();
    const c = new x402Client().register("eip155:8453", new ExactEvmScheme(account));
    const res = await wrapFetchWithPayment(f, c)(t.url, init(t));
    await report("x402-v2-fetch", t, res, rec);
  });
  await run("x402-v2-manual", t, async () => {
    const http = new x402HTTPClient(new x402Client().register("eip155:8453", new ExactEvmScheme(account)));
    const r402 = await fetch(t.url, init(t));
    if (r402.status !== 402) throw new Error(`unpaid call answered ${r402.status}`);
    const required = http.getPaymentRequiredResponse((n) => r402.headers.get(n), await r402.json());
    const headers = http.encodePaymentSignatureHeader(await http.createPaymentPayload(required));
    const [name] = Object.keys(headers);
    const res = await fetch(t.url, init(t, headers));
    await report("x402-v2-manual", t, res, { header: name.toLowerCase(), value: headers[name] }, { advertisedAmount: required.accepts[0].amount });
  });
  await run("x402-v1-fetch", t, async () => {
    const [f, rec] = recordingFetch(v1Only);
    const c = new x402Client().registerV1("base", new ExactEvmSchemeV1(account));
    const res = await wrapFetchWithPayment(f, c)(t.url, init(t));
    await report("x402-v1-fetch", t, res, rec);
  });
  await run("x402-v1-legacy", t, async () => {
    // The legacy SDK reads the v1 body of the 402 (it ignores
    // PAYMENT-REQUIRED); its default spending cap is 0.10 USDC.
    const [f, rec] = recordingFetch();
    const signer = await legacyCreateSigner("base", TEST_KEY);
    const res = await legacyWrapFetch(f, signer, BigInt(1_000_000))(t.url, init(t));
    await report("x402-v1-legacy", t, res, rec);
  });
  await run("mppx-evm", t, async () => {
    const [f, rec] = recordingFetch();
    const m = Mppx.create({
      polyfill: false,
      fetch: f,
      methods: [evm.charge({ account, networks: [8453], currencies: [evm.assets.base.USDC], maxAmount: "1" })],
    });
    const res = await m.fetch(t.url, init(t));
    await report("mppx-evm", t, res, rec);
  });
}
