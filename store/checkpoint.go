package store

// Checkpoints of the SQLite writer's everyday commits.
//
// SQLite checkpoints a WAL at the commit that takes it past
// wal_autocheckpoint frames (1,000 by default), on the committing
// connection: every few dozen paid calls, one of them waited while about a
// thousand pages were copied into the database file and the file was
// synced (6 % of a paid call's CPU time in a profile of bench/payment,
// about 45 µs a call on average). The writer's commits are counted
// instead, and every walCheckpointCommits of them start a passive
// checkpoint on a reader connection in the background (DB.checkpointSoon,
// as after bulk transactions): the writer goes on meanwhile. The WAL
// restarts from its beginning at the first write that finds it wholly
// checkpointed; under a steady stream of writes a background checkpoint
// seldom ends with nothing left to copy, so the WAL may grow to the
// backstop, the writer's own automatic checkpoint at WalBackstopFrames
// (40 MB of 4 KB pages: a bench/payment run leaves such a WAL), after
// which it restarts. The backstop also covers writes the count does not
// see (statements run through DB.SQL's handles). Durability is unchanged:
// a commit is durable when its WAL frames are synced, whoever copies them
// later.

// walCheckpointCommits is how many writer commits start a background
// checkpoint: with a paid call's three commits of about eighteen pages,
// about 1,200 frames, about as many as the automatic checkpoint copied
// at a time (a checkpoint every 1,000 commits measured no different in
// bench/payment).
const walCheckpointCommits = 200

// WalBackstopFrames is the SQLite writer's wal_autocheckpoint (store/sqlite
// opens it with it): the WAL length at which the writer checkpoints at a
// commit itself, when the background checkpoints (every
// walCheckpointCommits commits) fell behind or did not see the writes.
const WalBackstopFrames = 10000

// committed counts a commit of the writer and starts a background
// checkpoint every walCheckpointCommits (SQLite files only: an in-memory
// database, whose reader is its writer, has no WAL).
func (db *DB) committed() {
	if db.drv.Dialect != SQLite || db.r == db.w {
		return
	}
	if db.ckpt.commits.Add(1)%walCheckpointCommits == 0 {
		db.checkpointSoon()
	}
}
