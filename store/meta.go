package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrNotFound is returned when a requested row does not exist. Domain
// methods translate it into their own package's sentinel (niche.ErrNotFound,
// ...), so callers of domain interfaces never see it.
var ErrNotFound = errors.New("store: not found")

// Meta returns the instance-wide setting key, or ErrNotFound.
func (db *DB) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := db.QueryRow(ctx, "SELECT value FROM assay_meta WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("store: meta %s: %w", key, err)
	}
	return v, nil
}

// SetMeta stores the instance-wide setting key.
func (db *DB) SetMeta(ctx context.Context, key, value string) error {
	_, err := db.Exec(ctx, `INSERT INTO assay_meta (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		key, value, db.NowMicros())
	if err != nil {
		return fmt.Errorf("store: set meta %s: %w", key, err)
	}
	return nil
}

// SetMetaOnce stores key only if it is absent and returns the stored value
// (the existing one when another writer was first). Instances sharing a
// database use it to agree on generated settings such as signing keys.
func (db *DB) SetMetaOnce(ctx context.Context, key, value string) (string, error) {
	var stored string
	err := db.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO assay_meta (key, value, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO NOTHING`, key, value, db.NowMicros()); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT value FROM assay_meta WHERE key = ?", key).Scan(&stored)
	})
	if err != nil {
		return "", fmt.Errorf("store: set meta once %s: %w", key, err)
	}
	return stored, nil
}
