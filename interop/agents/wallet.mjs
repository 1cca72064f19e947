// The paying side shared by the interop scripts: the official x402 client
// with the exact EVM scheme, signing with the public Hardhat/Anvil test key
// #0 (dev mode only: no real funds exist on it).
import { privateKeyToAccount } from "viem/accounts";
import { x402Client } from "@x402/core/client";
import { x402HTTPClient } from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/client";

export const account = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");

export function payer() {
  return new x402Client().register("eip155:8453", new ExactEvmScheme(account));
}

export function httpPayer() {
  return new x402HTTPClient(payer());
}

// fail prints a reason and exits non-zero.
export function fail(what, detail) {
  console.error(`FAIL ${what}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
  process.exit(1);
}

// argValue returns the value after a command-line flag, or undefined.
export function argValue(flag) {
  const i = process.argv.indexOf(flag);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : undefined;
}
