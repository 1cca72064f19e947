package store

// Checkpoints of the SQLite writer's everyday commits.
//
// SQLite checkpoints a WAL at the commit that takes it past
// wal_autocheckpoint frames (1,000 by default), on the committing
// connection: every few dozen paid calls, one of them waited while about a
// thousand pages were copied into the database file and the file was
// synced (about 45 µs per paid call on average, a fourteenth of the gate's
// cost). The writer's commits are counted instead, and every
// walCheckpointCommits of them start a passive checkpoint on a reader
// connection in the background (DB.checkpointSoon, as after bulk
// transactions): the writer goes on meanwhile, and the WAL restarts from
// its beginning at the first write that finds it wholly checkpointed, as
// before. The writer's own automatic checkpoint stays as a backstop at
// WalBackstopFrames, for writes the count does not see (statements run
// through DB.SQL's handles). Durability is unchanged: a commit is durable
// when its WAL frames are synced, whoever copies them later.

// walCheckpointCommits is how many writer commits start a background
// checkpoint: with a paid call's three commits of about eighteen pages,
// about 1,200 frames, as many as the automatic checkpoint let grow.
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
