package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/assaykit/assay/claims"
	"github.com/assaykit/assay/claims/corpus"
	"github.com/assaykit/assay/shapes"
	"github.com/assaykit/assay/snapshot"
	"github.com/assaykit/assay/store"
	"github.com/assaykit/assay/store/claimsstore"
	"github.com/assaykit/assay/store/snapshotstore"
	"github.com/assaykit/assay/store/sqlite"
)

// verifier holds the engine and everything it needs, for one process.
type verifier struct {
	engine    *claims.Engine
	snapshots *snapshot.Service
	db        *store.DB
	site      *corpus.LoopbackServer
}

// newVerifier builds the pieces in dependency order: the collection and its
// loopback server, the provider, the store, the snapshot service that dials
// the loopback server for every corpus host, and the engine. snap, when
// non-nil, is the base of the snapshot options (see run).
func newVerifier(ctx context.Context, corpusDir string, snap *snapshot.Options) (_ *verifier, err error) {
	coll, err := corpus.Demo()
	if corpusDir != "" {
		coll, err = corpus.Load(os.DirFS(corpusDir))
	}
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	provider, err := corpus.New(coll, nil)
	if err != nil {
		return nil, err
	}

	v := &verifier{}
	defer func() {
		if err != nil {
			v.Close()
		}
	}()
	if v.site, err = corpus.Serve(coll); err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	// ":memory:" is a private SQLite database that lives as long as db: the
	// result and the snapshot records (and, as its snapshot store is also a
	// BlobStore, the captured bytes) are gone when the program ends.
	if v.db, err = sqlite.Open(ctx, ":memory:", nil); err != nil {
		return nil, err
	}
	var opts snapshot.Options
	if snap != nil {
		opts = *snap
	}
	// The corpus's hosts (docs.base.example, ...) are dialled at the
	// loopback server, and that one address is let past the capturer's
	// refusal of loopback addresses. Nothing else is.
	opts.HostMap = v.site.HostMap()
	opts.AllowAddrs = v.site.AllowList()
	records := snapshotstore.New(v.db)
	v.snapshots, err = snapshot.NewService(records, records, &opts)
	if err != nil {
		return nil, err
	}
	if v.engine, err = claims.New(provider, claimsstore.New(v.db), v.snapshots, classification(coll)); err != nil {
		return nil, err
	}
	return v, nil
}

// verify decodes body as a ClaimVerificationRequest (defaults applied) and
// verifies it on tier.
func (v *verifier) verify(ctx context.Context, tier string, body []byte) (*claims.Result, error) {
	var req claims.Request
	if err := shapes.Decode(body, &req); err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	return v.engine.Verify(ctx, tier, &req, nil)
}

// Close releases everything newVerifier opened, in reverse order.
func (v *verifier) Close() error {
	var err error
	if v.snapshots != nil {
		v.snapshots.Close()
	}
	if v.db != nil {
		err = errors.Join(err, v.db.Close())
	}
	if v.site != nil {
		err = errors.Join(err, v.site.Close())
	}
	return err
}

// classification tells the engine what kind of site each corpus host is,
// from the documents' front matter. The engine classifies sources by
// domain (see "Classification" in package claims), and the corpus's
// invented .example hosts are on none of its built-in lists, so without
// this every corpus source would be "other" and would not count under the
// default authoritative policy. Hosts whose documents disagree on their
// kind, and the kinds the engine has no list for (reference works, forums,
// other), are left to the engine's own rules.
func classification(c *corpus.Collection) *claims.Options {
	return &claims.Options{
		OfficialDomains: c.HostsOfKind(corpus.KindOfficial),
		AcademicDomains: c.HostsOfKind(corpus.KindAcademic),
		NewsDomains:     c.HostsOfKind(corpus.KindNews),
		VendorDomains:   c.HostsOfKind(corpus.KindVendor),
	}
}
