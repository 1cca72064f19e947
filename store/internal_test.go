package store

import "testing"

// Tests of internals that need no database (the others open one through
// store/sqlite and store/postgres, from package store_test).

func TestRebind(t *testing.T) {
	t.Parallel()
	pg := &DB{drv: Driver{Dialect: Postgres}}
	cases := map[string]string{
		"SELECT a FROM t WHERE x = ? AND y = ?":  "SELECT a FROM t WHERE x = $1 AND y = $2",
		"SELECT '?' , \"q?\" FROM t WHERE z = ?": "SELECT '?' , \"q?\" FROM t WHERE z = $1",
		"SELECT 1 -- what?\nFROM t WHERE a = ?":  "SELECT 1 -- what?\nFROM t WHERE a = $1",
		"INSERT INTO t VALUES (?, 'it''s ?', ?)": "INSERT INTO t VALUES ($1, 'it''s ?', $2)",
		"no placeholders":                        "no placeholders",
	}
	for in, want := range cases {
		if got := pg.rebind(in); got != want {
			t.Errorf("rebind(%q) = %q, want %q", in, got, want)
		}
	}
	lite := &DB{drv: Driver{Dialect: SQLite}}
	if got := lite.rebind("a = ?"); got != "a = ?" {
		t.Errorf("sqlite rebind changed the query: %q", got)
	}
}
