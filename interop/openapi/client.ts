// A client generated from assay's own documents calls the protected
// operations. server/openapi_client_test.go generates claims.d.ts and
// niche.d.ts with openapi-typescript from the served
// /claim-verification/openapi.json and /niche-discovery/openapi.json,
// type-checks this file against them with tsc (so a credential the
// documents do not declare is a compile error), runs it, and checks what it
// prints.
//
//   node client.js <base> <orderId> <orderToken> <verificationId> <customerKey> <nicheId> <unlockToken>
import createClient from "openapi-fetch";
import type { paths as ClaimPaths } from "./claims";
import type { paths as NichePaths } from "./niche";

declare const process: { argv: string[] };

const [base, orderId, orderToken, verificationId, customerKey, nicheId, unlockToken] = process.argv.slice(2);
const claims = createClient<ClaimPaths>({ baseUrl: base + "/claim-verification" });
const niche = createClient<NichePaths>({ baseUrl: base + "/niche-discovery" });
const out: Record<string, unknown> = {};

// The order, with its token (the X-Agentic-Order-Token header parameter).
const order = await claims.GET("/v1/orders/{order_id}", {
  params: { path: { order_id: orderId }, header: { "X-Agentic-Order-Token": orderToken } },
});
out.order = { status: order.response.status, orderId: order.data?.orderId, orderStatus: order.data?.status };

// Without a valid token: a typed error body.
const refused = await claims.GET("/v1/orders/{order_id}", {
  params: { path: { order_id: orderId }, header: { "X-Agentic-Order-Token": "not-the-token" } },
});
out.refused = { status: refused.response.status, detail: refused.error?.detail };

// The delivered answer of the order, and the verification it made.
const result = await claims.GET("/v1/orders/{order_id}/result", {
  params: { path: { order_id: orderId }, header: { "X-Agentic-Order-Token": orderToken } },
});
out.result = { status: result.response.status };
const verification = await claims.GET("/v1/claims/verifications/{verification_id}", {
  params: { path: { verification_id: verificationId }, header: { "X-Agentic-Order-Token": orderToken } },
});
out.verification = { status: verification.response.status, verificationId: verification.data?.verificationId };

// A registered customer's orders, with its key.
const orders = await claims.GET("/v1/customer/orders", {
  params: { header: { "X-Agentic-Customer-Key": customerKey }, query: { limit: 10 } },
});
out.customerOrders = { status: orders.response.status, count: orders.data?.orders.length };

// The order is also readable under the niche prefix.
const nicheOrder = await niche.GET("/v1/orders/{order_id}", {
  params: { path: { order_id: orderId }, header: { "X-Agentic-Order-Token": orderToken } },
});
out.nicheOrder = { status: nicheOrder.response.status };

// A full niche evaluation with a pay-per-call unlock token.
const evaluation = await niche.GET("/v1/niches/{niche_id}", {
  params: { path: { niche_id: nicheId }, header: { "x-niche-paid-call": unlockToken } },
});
out.niche = { status: evaluation.response.status, id: evaluation.data?.id, access: evaluation.data?.access.kind };

// An unpaid call of a paid operation: the 402, typed as declared.
const unpaid = await claims.POST("/v1/claims/verify", { body: { claim: "The Base mainnet chain ID is 8453." } });
out.unpaid = { status: unpaid.response.status, type: unpaid.response.headers.get("content-type") };

console.log(JSON.stringify(out));
