// Package nichestore is the SQL implementation of the niche catalogue's
// stores: niche.Store (signals, evaluations and their revisions, the
// catalogue's reads, searches and quotas), its optional interfaces
// (niche.EvidenceStore, niche.BulkCreator, niche.IndexSource,
// niche.RowStreamer, niche.ChangeFeed, niche.ChangeNotifier,
// niche.LanguageReporter) and niche.SubscriptionStore (subscriptions,
// billing events, subscriber tokens), on a database opened with
// store/sqlite or store/postgres (package store holds the shared SQL
// helper, the migrations, and the search text every open and write keeps
// in the database's niche.Language).
//
// The revision log keeps each revision's state as JSON, except the first
// revision of an evaluation created by a bulk import, whose state is the
// evaluation's row until a later write changes the row and writes it into
// the log first (see import.go).
//
// It passes nichetest.TestStore, nichetest.TestSubscriptionStore and
// nichetest.TestSubscriptionStoreShared; internal/conformance runs them on
// every backend. niche/nichemem is the in-memory implementation.
package nichestore

import (
	"github.com/assaykit/assay/niche"
	"github.com/assaykit/assay/store"
)

// Store is the niche store of one database. Safe for concurrent use; any
// number of Stores (and instances) may share the database.
type Store struct{ db *store.DB }

// New returns the niche store of db.
func New(db *store.DB) *Store { return &Store{db: db} }

var _ niche.LanguageReporter = (*Store)(nil)

// SearchLanguage implements niche.LanguageReporter: the word rules of the
// database's search index (store.Options.SearchLanguage).
func (ns *Store) SearchLanguage() niche.Language { return ns.db.SearchLanguage() }
