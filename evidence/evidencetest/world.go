package evidencetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/corpus"
	"github.com/assaykit/assay/evidence"
	"github.com/assaykit/assay/internal/httpjson"
	"github.com/assaykit/assay/internal/ids"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/snapshot/snapshottest"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/snapshotstore"
	"github.com/assaykit/assay/store/sqlite"
)

// World is a claims engine on the offline demo corpus (served on
// loopback and captured for real, in an in-memory SQLite database), with
// receipt keys and bundle keys: everything needed to sell a verification
// and bundle it, without a server. Close releases it.
type World struct {
	Engine    *claims.Engine
	Snapshots *snapshot.Service
	Receipts  *payment.Keyring
	Keys      *evidence.Keys
	// Tripwire reports any capture that tried to leave loopback.
	Tripwire *snapshottest.Tripwire

	site *corpus.LoopbackServer
	db   *store.DB
}

// NewWorld builds a World.
func NewWorld(ctx context.Context) (_ *World, err error) {
	w := &World{Tripwire: &snapshottest.Tripwire{}}
	defer func() {
		if err != nil {
			w.Close()
		}
	}()
	coll, err := corpus.Demo()
	if err != nil {
		return nil, err
	}
	prov, err := corpus.New(coll, nil)
	if err != nil {
		return nil, err
	}
	if w.site, err = corpus.Serve(coll); err != nil {
		return nil, err
	}
	if w.db, err = sqlite.Open(ctx, ":memory:", nil); err != nil {
		return nil, err
	}
	records := snapshotstore.New(w.db)
	w.Snapshots, err = snapshot.NewService(records, records, &snapshot.Options{Resolver: snapshottest.Resolver(nil),
		DialControl: w.Tripwire.Control, HostMap: w.site.HostMap(), AllowAddrs: w.site.AllowList()})
	if err != nil {
		return nil, err
	}
	w.Engine, err = claims.New(prov, claimsstore.New(w.db), w.Snapshots, &claims.Options{
		OfficialDomains: coll.HostsOfKind(corpus.KindOfficial), AcademicDomains: coll.HostsOfKind(corpus.KindAcademic),
		NewsDomains: coll.HostsOfKind(corpus.KindNews), VendorDomains: coll.HostsOfKind(corpus.KindVendor)})
	if err != nil {
		return nil, err
	}
	spec, err := evidence.GenerateKeySpec()
	if err != nil {
		return nil, err
	}
	if w.Keys, err = evidence.ParseKeys(spec); err != nil {
		return nil, err
	}
	if w.Receipts, err = payment.ParseKeyring(payment.GenerateReceiptKey()); err != nil {
		return nil, err
	}
	return w, nil
}

// Close releases the world.
func (w *World) Close() {
	if w.Snapshots != nil {
		w.Snapshots.Close()
	}
	if w.db != nil {
		w.db.Close()
	}
	if w.site != nil {
		w.site.Close()
	}
}

// JWKS is the world's published key set: receipt keys, then bundle keys.
func (w *World) JWKS() payment.JWKS {
	j := w.Receipts.JWKS()
	j.Keys = append(j.Keys, w.Keys.JWKs()...)
	return j
}

// Sale is a verification sold by the world.
type Sale struct {
	Record  *claims.Record
	OrderID string
	// Delivered are the bytes delivered (the result's JSON); Receipt the
	// signed receipt over them.
	Delivered, Receipt []byte
}

// Sell verifies claim on tier and signs a dev-mode receipt over the
// result's bytes, as the gate would.
func (w *World) Sell(ctx context.Context, tier, claim string) (*Sale, error) {
	res, err := w.Engine.Verify(ctx, tier, &claims.Request{Claim: claim}, nil)
	if err != nil {
		return nil, err
	}
	rec, err := w.Engine.Verification(ctx, res.VerificationID)
	if err != nil {
		return nil, err
	}
	body, err := httpjson.Marshal(res)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	order := ids.New(ids.Order)
	rc := &payment.Receipt{ReceiptID: ids.New(ids.Receipt), OrderID: order, OfferID: "claims.verify." + tier, Tier: tier,
		AmountMicroUSD: 120000, Currency: payment.Currency, PaymentProtocol: "x402", PaymentMethod: "exact", Network: "eip155:8453",
		Payer: "0x857b06519E91e3A54538791bDbb0E22373e36b66", SettlementReference: "0xdev", Dev: true, ResultKind: "verification",
		ResultID: res.VerificationID, ResultSHA256: hex.EncodeToString(sum[:]), IssuedAt: time.Now().UTC().Format(time.RFC3339)}
	receipt, err := payment.SignReceipt(w.Receipts, rc)
	if err != nil {
		return nil, err
	}
	return &Sale{Record: rec, OrderID: order, Delivered: body, Receipt: receipt}, nil
}

// Bundle makes the bundle of a sale with b (a Builder over w.Snapshots).
func (w *World) Bundle(ctx context.Context, b *evidence.Builder, s *Sale) ([]byte, error) {
	if b == nil {
		return nil, errors.New("evidencetest: no builder")
	}
	src := evidence.VerificationSource(s.Record, s.OrderID, s.Delivered, evidence.FormResult, s.Receipt)
	src.JWKS, src.JWKSURL = w.JWKS(), "http://127.0.0.1/.well-known/jwks.json"
	bd, err := b.Prepare(ctx, src)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := bd.WriteTo(ctx, &out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
