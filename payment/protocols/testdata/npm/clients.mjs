// Shared setup of the official clients used by generate.mjs and live.mjs.
import { privateKeyToAccount } from "viem/accounts";
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { x402HTTPClient } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactEvmSchemeV1 } from "@x402/evm/exact/v1/client";
import { Mppx, evm } from "mppx/client";
import { Receipt } from "mppx";

// Public Hardhat/Anvil key #0: test funds only.
export const account = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");

export function v2Client() {
  return new x402Client().register("eip155:8453", new ExactEvmScheme(account));
}

export function v1Client() {
  return new x402Client().registerV1("base", new ExactEvmSchemeV1(account));
}

export function mppClient() {
  return Mppx.create({
    polyfill: false,
    methods: [evm.charge({ account, networks: [8453], currencies: [evm.assets.base.USDC], maxAmount: "1" })],
  });
}

export { wrapFetchWithPayment, x402HTTPClient, decodePaymentResponseHeader, Receipt };
