// Reads the WARC of an evidence bundle (archive/data.warc.gz, extracted by
// the Go test) with warcio, webrecorder's reader, record by record, and
// checks every response's payload digest:
//   node warcio.mjs <data.warc.gz>
// Prints a JSON summary; exits 1 on any problem.
import { createReadStream } from "node:fs";
import { createHash } from "node:crypto";
import { WARCParser } from "warcio";

const [file] = process.argv.slice(2);
if (!file) {
  console.error("usage: node warcio.mjs <data.warc.gz>");
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
const records = [];
for await (const record of new WARCParser(createReadStream(file))) {
  const type = record.warcType;
  const entry = { type, version: record.warcHeaders.protocol, targetURI: record.warcTargetURI };
  if (type === "response") {
    entry.status = Number(record.httpHeaders?.statusCode);
    const payload = await record.readFully(false);
    const sum = createHash("sha256").update(payload).digest();
    entry.payloadSha256 = sum.toString("hex");
    if (record.warcPayloadDigest !== "sha256:" + base32(sum)) problems.push(`${record.warcTargetURI}: WARC-Payload-Digest does not match the payload`);
  } else {
    await record.readFully(false);
  }
  if (entry.version !== "WARC/1.1") problems.push(`${type} record is ${entry.version}, not WARC/1.1`);
  records.push(entry);
}
console.log(JSON.stringify({ records, problems }));
process.exit(problems.length ? 1 : 0);
