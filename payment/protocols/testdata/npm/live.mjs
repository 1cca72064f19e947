// Pays a live assay-style endpoint (the Go test's httptest server) with the
// official clients and prints one JSON line per client. Usage:
//   node live.mjs http://127.0.0.1:PORT/path
import { v2Client, v1Client, mppClient, wrapFetchWithPayment, x402HTTPClient, decodePaymentResponseHeader, Receipt } from "./clients.mjs";

const url = process.argv[2];
const body = '{"claim":"The Eiffel Tower is in Paris"}';
const post = () => ({ method: "POST", headers: { "content-type": "application/json" }, body });
const report = async (client, res, response, extra = {}) => {
  console.log(JSON.stringify({ client, status: res.status, body: await res.text(), response, ...extra }));
};
const settle = (res) => {
  const h = res.headers.get("PAYMENT-RESPONSE") ?? res.headers.get("X-PAYMENT-RESPONSE");
  return h ? decodePaymentResponseHeader(h) : null;
};

{
  const res = await wrapFetchWithPayment(fetch, v2Client())(url, post());
  await report("x402-v2-fetch", res, settle(res));
}
{
  const http = new x402HTTPClient(v2Client());
  const r402 = await fetch(url, post());
  const required = http.getPaymentRequiredResponse((n) => r402.headers.get(n), await r402.json());
  const headers = http.encodePaymentSignatureHeader(await http.createPaymentPayload(required));
  const send = () => fetch(url, { ...post(), headers: { "content-type": "application/json", ...headers } });
  const res = await send();
  const replay = await send(); // the same payment again must be refused
  await replay.text();
  await report("x402-v2-manual", res, settle(res), { replayStatus: replay.status });
}
{
  const res = await wrapFetchWithPayment(fetch, v1Client())(url + "?v1only=1", post());
  await report("x402-v1", res, settle(res));
}
{
  const res = await mppClient().fetch(url, post());
  const h = res.headers.get("Payment-Receipt");
  await report("mppx-evm", res, h ? Receipt.deserialize(h) : null);
}
