// Verifies the signature of an assay agent card with the official A2A JS
// SDK (@a2a-js/sdk's verifyAgentCardSignature: JWS over the RFC 8785
// canonical card, jose), the key fetched from the JWKS the signature names.
// Driven by server/agents/mcp_a2a_interop_test.go (TestAgentCardSignature).
//
//   node card.mjs <base URL> <card path>
//
// Prints one JSON line: the SDK's canonical form of the card, whether the
// card verifies, and whether a copy with a changed description, or checked
// against another key, verifies (neither may).
import { canonicalizeAgentCard, verifyAgentCardSignature } from '@a2a-js/sdk';

const [base, cardPath] = process.argv.slice(2);
const res = await fetch(new URL(cardPath, base));
if (!res.ok) throw new Error(`GET ${cardPath}: ${res.status}`);
const card = await res.json();

const keys = [];
// retrievePublicKey: the JWK of kid in the JWKS at jku, which must be on the
// server's own origin (a card must not name someone else's keys).
const retrieve = async (kid, jku) => {
  if (!jku || new URL(jku).origin !== new URL(base).origin) throw new Error(`jku ${jku} is not on ${base}`);
  const r = await fetch(jku);
  if (!r.ok) throw new Error(`GET ${jku}: ${r.status}`);
  const key = (await r.json()).keys.find((k) => k.kid === kid);
  if (!key) throw new Error(`no key ${kid} in ${jku}`);
  keys.push({ kid, jku });
  return key;
};
const verifies = async (c, retrievePublicKey) => {
  const quiet = console.debug;
  console.debug = () => {}; // the SDK logs each failed entry
  try {
    await verifyAgentCardSignature(retrievePublicKey)(c);
    return { ok: true };
  } catch (e) {
    return { ok: false, error: String(e) };
  } finally {
    console.debug = quiet;
  }
};

const out = { canonical: canonicalizeAgentCard(card), signatures: (card.signatures ?? []).length };
out.verified = await verifies(card, retrieve);
out.keys = keys;
out.tampered = await verifies({ ...card, description: `${card.description} (changed)` }, retrieve);
const other = { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' };
out.otherKey = await verifies(card, async () => other);
console.log(JSON.stringify(out));
