// Drives an assay A2A 1.0 endpoint with the official A2A JavaScript SDK
// (@a2a-js/sdk, JSON-RPC transport): builds the client from the agent card
// the server serves at {base}/.well-known/agent-card.json (and fails
// without one), gets the HTTP 402 of an unpaid SendMessage, pays it with
// @x402/evm (a real EIP-3009 signature) in the PAYMENT-SIGNATURE header
// through serviceParameters, reads the completed task and the order
// headers, reads the task again with GetTask and the order token, and
// streams a second paid message. Prints one JSON line; exits non-zero on
// failure.
//
//   node a2a.mjs http://127.0.0.1:PORT/claim-verification [--claim "text"]
import { Role, TaskState } from "@a2a-js/sdk";
import { ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { httpPayer, fail, account, argValue } from "./wallet.mjs";

const base = process.argv[2];
if (!base) fail("usage", "node a2a.mjs <service base URL> [--claim text]");

let last; // the last HTTP response, to read payment and order headers
let lastRequest; // the last request sent: url and init
const fetchImpl = async (input, init) => {
  lastRequest = { url: input, init };
  const res = await fetch(input, init);
  last = res;
  return res;
};
const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] });
let client;
try {
  client = await factory.createFromUrl(base);
} catch (e) {
  fail("agent card", `${base}/.well-known/agent-card.json: ${e.message ?? e}`);
}
const out = { protocolVersion: client.protocolVersion ?? null };
const card = await client.getAgentCard();
out.card = {
  name: card.name,
  url: card.supportedInterfaces?.[0]?.url,
  skills: (card.skills ?? []).map((s) => s.id),
  extensions: (card.capabilities?.extensions ?? []).map((x) => x.uri),
};

const claim = argValue("--claim") ?? "Exampleton raised its minimum wage to $18.00 per hour, effective 1 November 2026.";
const message = () => ({
  message: { messageId: crypto.randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: "text", value: claim } }] },
});
const headersOf = (res) => ({
  orderId: res.headers.get("x-agentic-order-id"),
  orderToken: res.headers.get("x-agentic-order-token"),
  receiptId: res.headers.get("x-agentic-receipt-id"),
});

// Unpaid: the 402 surfaces as an error; its challenge is in the headers.
const pay = httpPayer();
async function challenge(params) {
  try {
    await client.sendMessage(params);
  } catch (e) {
    if (last?.status !== 402) fail("unpaid", String(e));
    return pay.getPaymentRequiredResponse((n) => last.headers.get(n));
  }
  fail("unpaid", "SendMessage succeeded without payment");
}
const params = message();
const required = await challenge(params);
out.unpaid = { status: 402, resource: required.resource.url, amount: required.accepts[0].amount };

// Paid: the official client signs, the header goes in serviceParameters.
const sig = pay.encodePaymentSignatureHeader(await pay.createPaymentPayload(required));
const result = await client.sendMessage(params, { serviceParameters: sig });
if (!result.status) fail("paid result is not a task", result);
const order = headersOf(last);
const settle = pay.getPaymentSettleResponse((n) => last.headers.get(n));
const parts = result.artifacts?.[0]?.parts ?? [];
out.paid = {
  state: TaskState[result.status.state],
  taskId: result.id,
  text: parts[0]?.content?.$case === "text" ? parts[0].content.value : null,
  dataStatus: parts[1]?.content?.$case === "data" ? parts[1].content.value.status : null,
  mediaType: parts[1]?.mediaType,
  ...order,
  settlement: { success: settle.success, transaction: settle.transaction, payer: settle.payer },
};
if (settle.payer?.toLowerCase() !== account.address.toLowerCase()) fail("payer", settle);

// The very same request again (the SDK numbers its JSON-RPC ids, so a
// retry whose answer was lost resends the bytes it sent): the same
// purchase, with a fresh order token.
const paidRequest = lastRequest;
const resent = await fetch(paidRequest.url, paidRequest.init);
const resentBody = await resent.json();
out.resent = {
  status: resent.status,
  replay: resent.headers.get("x-agentic-idempotent-replay"),
  sameOrder: resent.headers.get("x-agentic-order-id") === order.orderId,
  sameReceipt: resent.headers.get("x-agentic-receipt-id") === order.receiptId,
  freshToken: Boolean(resent.headers.get("x-agentic-order-token")) && resent.headers.get("x-agentic-order-token") !== order.orderToken,
  taskId: resentBody?.result?.task?.id ?? null,
};
order.orderToken = resent.headers.get("x-agentic-order-token") ?? order.orderToken;
out.paid.orderToken = order.orderToken;

// GetTask with the order token (free), and without it (refused).
const task = await client.getTask({ id: result.id }, { serviceParameters: { "X-Agentic-Order-Token": order.orderToken } });
out.getTask = { state: TaskState[task.status.state], artifacts: task.artifacts.length };
try {
  await client.getTask({ id: result.id });
  fail("GetTask without the order token", "succeeded");
} catch (e) {
  out.getTaskWithoutToken = String(e.message ?? e).slice(0, 80);
}

// The same payment for another message: refused.
try {
  await client.sendMessage(message(), { serviceParameters: sig });
  fail("replay", "accepted");
} catch (e) {
  out.replayStatus = last?.status;
}

// Streaming, paid: events as they happen.
const params2 = message();
const required2 = await (async () => {
  try {
    for await (const _ of client.sendMessageStream(params2)) { /* unpaid: never */ }
  } catch (e) {
    if (last?.status !== 402) fail("unpaid stream", String(e));
    return pay.getPaymentRequiredResponse((n) => last.headers.get(n));
  }
  fail("unpaid stream", "accepted");
})();
const sig2 = pay.encodePaymentSignatureHeader(await pay.createPaymentPayload(required2));
out.stream = [];
for await (const ev of client.sendMessageStream(params2, { serviceParameters: sig2 })) {
  const p = ev.payload ?? ev;
  switch (p.$case) {
    case "task": out.stream.push(`task:${TaskState[p.value.status.state]}`); break;
    case "statusUpdate": out.stream.push(`status:${TaskState[p.value.status.state]}`); break;
    case "artifactUpdate": out.stream.push("artifact"); break;
    default: out.stream.push(`?${p.$case}`);
  }
}
out.streamOrderId = last.headers.get("x-agentic-order-id");
out.streamOrderToken = last.headers.get("x-agentic-order-token");
console.log(JSON.stringify(out));
