// Validates OpenAPI documents with a standard OpenAPI 3.1 validator
// (@readme/openapi-parser: the OpenAPI 3.1 meta-schema plus its semantic
// checks: unique operation ids, path parameters declared, resolvable
// references). Prints one JSON line per URL; exits 1 if any is invalid.
//
//   node openapi.mjs <url>...
import { validate, compileErrors } from "@readme/openapi-parser";

let failed = false;
for (const url of process.argv.slice(2)) {
  const res = await fetch(url);
  const doc = await res.json();
  const version = doc.openapi;
  const result = await validate(doc);
  const line = { url, status: res.status, openapi: version, valid: result.valid, warnings: result.warnings?.length ?? 0 };
  if (!result.valid) {
    failed = true;
    line.errors = compileErrors(result);
  }
  console.log(JSON.stringify(line));
}
process.exit(failed ? 1 : 0);
