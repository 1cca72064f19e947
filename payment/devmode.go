package payment

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"

	"github.com/assaykit/assay/payment/x402"
)

// DevReferencePrefix starts every dev-mode settlement reference, so a fake
// transaction can never be mistaken for a real one (real hashes are pure
// hex after 0x).
const DevReferencePrefix = "0xdev"

// devReference is the deterministic fake transaction reference of a dev
// settlement: "0xdev" + 61 hex digits of SHA-256(reservation key), the
// length of a real transaction hash.
func devReference(reservationKey string) string {
	sum := sha256.Sum256([]byte(reservationKey))
	return DevReferencePrefix + hex.EncodeToString(sum[:])[:61]
}

// devSettleX402 records an x402 settlement without sending anything.
func (p *Protocols) devSettleX402(a *Authorization, st *x402State) (*Settlement, error) {
	ref := devReference(a.ReservationKey)
	p.log.Debug("payment dev mode: settlement recorded, nothing sent on-chain", "reservation", a.ReservationKey, "reference", ref)
	return x402Settlement(st.version, p.net, &x402.SettleResponse{
		Success: true, Transaction: ref, Network: p.net.CAIP2, Payer: a.Payer,
		Amount: strconv.FormatInt(a.AmountMicroUSD, 10),
	}, true)
}

// b64std is standard base64 with padding (the x402 header encoding).
func b64std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
