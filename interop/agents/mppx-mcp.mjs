// Pays assay MCP tools with mppx's official MCP client (mppx/mcp/client,
// McpClient.wrap over the official MCP TypeScript SDK client) and the
// mppx evm charge method (a real EIP-3009 signature by the public test key
// #0: dev mode only). It calls verify_claim_quick and get_niche (full: true)
// without paying: the wrapper reads the MPP challenges the tool result
// carries in _meta["org.paymentauth/payment-required"], pays one and
// repeats the call with the credential in _meta["org.paymentauth/credential"];
// it then reports the receipt it received in
// _meta["org.paymentauth/receipt"]. Prints one JSON line; exits non-zero on
// failure.
//
//   node mppx-mcp.mjs http://127.0.0.1:PORT/mcp <niche id> [--claim "text"]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { evm } from "mppx/client";
import { McpClient } from "mppx/mcp/client";
import { account, fail, argValue } from "./wallet.mjs";

const endpoint = process.argv[2];
const nicheId = process.argv[3];
if (!endpoint || !nicheId) fail("usage", "node mppx-mcp.mjs <mcp endpoint URL> <niche id> [--claim text]");
const claim = argValue("--claim") ?? "Exampleton raised its minimum wage to $18.00 per hour, effective 1 November 2026.";

const client = new Client({ name: "assay-mppx-interop", version: "0.0.1" });
await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));

// What a client that pays with neither learns: both protocols.
const unpaid = await client.callTool({ name: "verify_claim_quick", arguments: { claim } });
const offered = unpaid._meta?.["org.paymentauth/payment-required"];
const out = {
  unpaid: {
    isError: unpaid.isError ?? false,
    x402: Boolean(unpaid.structuredContent?.x402Version && unpaid.structuredContent?.accepts?.length),
    mpp: (offered?.challenges ?? []).map((c) => `${c.method}.${c.intent}`),
  },
};

const approvals = [];
McpClient.wrap(client, {
  methods: [evm.charge({ account, networks: [8453], currencies: [evm.assets.base.USDC], maxAmount: "1" })],
  onPaymentRequired: async (challenge) => {
    approvals.push(`${challenge.method}.${challenge.intent}:${challenge.request.amount}`);
    return true;
  },
});

async function paid(name, args) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
  if (r.isError) fail(name, r.content?.[0]?.text ?? r);
  const receipt = r.receipt;
  if (!receipt || receipt.status !== "success" || !receipt.challengeId || !receipt.reference) fail(`${name} receipt`, r._meta ?? r);
  const body = JSON.parse(r.content[0].text);
  return {
    receipt: { status: receipt.status, method: receipt.method, challengeId: receipt.challengeId, reference: receipt.reference },
    commerce: r.structuredContent?.commerce,
    x402Settlement: Boolean(r._meta?.["x402/payment-response"]),
    body,
  };
}

const v = await paid("verify_claim_quick", { claim });
out.verify = { ...v, body: undefined, status: v.body.status, verificationId: v.body.verificationId };
const n = await paid("get_niche", { niche_id: nicheId, full: true });
out.niche = { ...n, body: undefined, id: n.body.evaluation?.id ?? n.body.id };
out.approvals = approvals;
out.payer = account.address;

await client.close();
console.log(JSON.stringify(out));
