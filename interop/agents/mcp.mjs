// Drives an assay MCP endpoint with the official MCP TypeScript SDK
// (StreamableHTTPClientTransport): lists the tools, calls a free tool,
// gets the x402 PaymentRequired result of an unpaid call, pays it with
// @x402/evm (a real EIP-3009 signature) in _meta["x402/payment"], receives
// progress notifications and the result, and checks that the payment
// cannot be used twice. Prints one JSON line; exits non-zero on failure.
//
//   node mcp.mjs http://127.0.0.1:PORT/claim-verification/mcp [--claim "text"]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { payer, fail, account, argValue } from "./wallet.mjs";

const endpoint = process.argv[2];
if (!endpoint) fail("usage", "node mcp.mjs <mcp endpoint URL> [--claim text]");

const claim = argValue("--claim") ?? "Exampleton raised its minimum wage to $18.00 per hour, effective 1 November 2026.";
const client = new Client({ name: "assay-interop", version: "0.0.1" });
const transport = new StreamableHTTPClientTransport(new URL(endpoint));
await client.connect(transport);
const out = { protocolVersion: transport.protocolVersion };

const { tools } = await client.listTools();
out.tools = tools.map((t) => t.name).sort();
const paidTool = tools.find((t) => t.name === "verify_claim");
if (!paidTool) fail("tools", out.tools);
if (paidTool.outputSchema) fail("verify_claim declares an outputSchema", paidTool.outputSchema);
out.maxSourcesMaximum = paidTool.inputSchema.properties.maxSources.maximum;

// A free tool with an output schema: the client validates it.
const tiers = await client.callTool({ name: "list_verification_tiers", arguments: {} });
out.tiers = tiers.structuredContent.tiers.map((t) => `${t.tier}:${t.priceUsd}`);

// Unpaid: a tool error carrying the PaymentRequired object.
const unpaid = await client.callTool({ name: "verify_claim", arguments: { claim } });
const required = unpaid.structuredContent;
if (!unpaid.isError || !required?.x402Version || !required.accepts) fail("unpaid", unpaid);
if (JSON.stringify(JSON.parse(unpaid.content[0].text)) !== JSON.stringify(required)) fail("content[0].text", unpaid.content[0].text);
out.unpaid = { isError: unpaid.isError, resource: required.resource.url, amount: required.accepts[0].amount, network: required.accepts[0].network };

// Pay with the official client: a real EIP-3009 authorisation.
const payment = await payer().createPaymentPayload(required);
const progress = [];
const paid = await client.callTool(
  { name: "verify_claim", arguments: { claim }, _meta: { "x402/payment": payment } },
  undefined,
  { onprogress: (p) => progress.push(`${p.progress}/${p.total} ${p.message}`), timeout: 60000 },
);
if (paid.isError) fail("paid", paid.content?.[0]?.text ?? paid);
const settle = paid._meta?.["x402/payment-response"];
if (!settle?.success) fail("settlement", paid._meta);
const result = JSON.parse(paid.content[0].text);
out.paid = {
  status: result.status,
  verificationId: result.verificationId,
  commerce: paid.structuredContent.commerce,
  settlement: { success: settle.success, transaction: settle.transaction, payer: settle.payer },
  progress,
};
if (settle.payer?.toLowerCase() !== account.address.toLowerCase()) fail("payer", settle);

// The same payment again for the same call: the same purchase (the answer
// whose response was lost), with a fresh order token.
const again = await client.callTool({ name: "verify_claim", arguments: { claim }, _meta: { "x402/payment": payment } });
out.again = {
  isError: again.isError ?? false,
  sameText: again.content?.[0]?.text === paid.content[0].text,
  commerce: again.structuredContent?.commerce,
};
// For another call: refused with a fresh PaymentRequired.
const other = await client.callTool({ name: "verify_claim", arguments: { claim: claim + " Really." }, _meta: { "x402/payment": payment } });
out.replay = { isError: other.isError, error: other.structuredContent?.error };

// Invalid arguments: the 422 detail, not a payment request.
const invalid = await client.callTool({ name: "verify_claim", arguments: { claim: "ab" }, _meta: { "x402/payment": payment } });
out.invalid = { isError: invalid.isError, detail: invalid.structuredContent?.detail };

await client.close();
console.log(JSON.stringify(out));
