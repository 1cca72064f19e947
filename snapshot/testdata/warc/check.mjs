// Parses a WARC file with warcio (webrecorder's reader) and checks it the
// way a consumer of an assay snapshot export would:
//   node check.mjs <file.warc> <expected rawSha256 hex>
// Prints a JSON summary; exits 1 on any mismatch.
import { createReadStream } from "node:fs";
import { createHash } from "node:crypto";
import { WARCParser } from "warcio";

const [file, expectedHex] = process.argv.slice(2);
if (!file || !expectedHex) {
  console.error("usage: node check.mjs <file.warc> <expected sha256 hex>");
  process.exit(2);
}

function base32(bytes) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0, value = 0, out = "";
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += "=";
  return out;
}

const problems = [];
const summary = { records: [] };
const parser = new WARCParser(createReadStream(file));
for await (const record of parser) {
  const type = record.warcType;
  const entry = { type, version: record.warcHeaders.protocol, id: record.warcHeader("WARC-Record-ID") };
  if (type === "response") {
    entry.status = Number(record.httpHeaders?.statusCode);
    entry.targetURI = record.warcTargetURI;
    const payload = await record.readFully(false);
    const sum = createHash("sha256").update(payload).digest();
    entry.payloadLength = payload.length;
    entry.payloadSha256 = sum.toString("hex");
    entry.payloadDigest = record.warcPayloadDigest;
    if (record.warcPayloadDigest !== "sha256:" + base32(sum)) problems.push("WARC-Payload-Digest does not match the payload");
    if (entry.payloadSha256 !== expectedHex) problems.push("payload hash differs from rawSha256");
  } else {
    await record.readFully(false);
  }
  summary.records.push(entry);
}
const types = summary.records.map((r) => r.type).join(",");
if (types !== "warcinfo,request,response") problems.push("record types: " + types);
if (summary.records.some((r) => r.version !== "WARC/1.1")) problems.push("not WARC/1.1");
summary.problems = problems;
console.log(JSON.stringify(summary));
process.exit(problems.length ? 1 : 0);
