package store

import (
	"context"
	"errors"
)

// ErrNoNotifications: the database cannot notify changes (SQLite).
var ErrNoNotifications = errors.New("store: this database does not notify changes")

// CanListen reports whether the database notifies changes (Listen):
// true on PostgreSQL.
func (db *DB) CanListen() bool { return db.drv.Listen != nil }

// Listen holds a connection of the reader pool listening on channel (an
// identifier, quoted) and calls notify once listening, then for each
// notification, until ctx is done or the connection fails (PostgreSQL
// LISTEN/NOTIFY, Driver.Listen). It returns ErrNoNotifications at once
// when the database cannot (SQLite).
func (db *DB) Listen(ctx context.Context, channel string, notify func()) error {
	if db.drv.Listen == nil {
		return ErrNoNotifications
	}
	return db.drv.Listen(ctx, db.r, channel, notify)
}
