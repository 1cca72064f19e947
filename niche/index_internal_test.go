package niche

import (
	"context"
	"testing"
	"time"
)

// versionSource is an IndexSource whose version the test sets; it counts
// full reads.
type versionSource struct {
	version int64
	reads   int
}

func (s *versionSource) SearchRows(_ context.Context, ids []string) ([]SearchRow, error) {
	if ids == nil {
		s.reads++
	}
	return nil, nil
}

func (s *versionSource) SearchVersion(context.Context) (int64, error) { return s.version, nil }

// TestIndexRateLimitsCostlyRebuilds: a rebuild that took longer than
// costlyBuild is not repeated before four times its duration has passed,
// however often the version changes; a cheap one is repeated at once.
func TestIndexRateLimitsCostlyRebuilds(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		cost     time.Duration // wall time one build takes
		wait     time.Duration // wall time between the version change and the search
		rebuilds bool
	}{
		{"cheap", costlyBuild / 2, 0, true},
		{"costly, cooling", 2 * costlyBuild, 4*2*costlyBuild - time.Millisecond, false},
		{"costly, cooled", 2 * costlyBuild, 4 * 2 * costlyBuild, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &versionSource{version: 1}
			x := newSearchIndex(src, 0, time.Now)
			wall := time.Unix(0, 0)
			x.wall = func() time.Time { return wall }
			// The build reads the clock before and after reading the rows.
			src2 := &costSource{versionSource: src, advance: func() { wall = wall.Add(tc.cost) }}
			x.src = src2
			if err := x.ensure(ctx); err != nil {
				t.Fatal(err)
			}
			src.version++
			wall = wall.Add(tc.wait)
			if err := x.ensure(ctx); err != nil {
				t.Fatal(err)
			}
			if got := src.reads == 2; got != tc.rebuilds {
				t.Errorf("full reads %d: rebuilt %v, want %v", src.reads, got, tc.rebuilds)
			}
		})
	}
}

// costSource advances the test's wall clock while the rows are read.
type costSource struct {
	*versionSource
	advance func()
}

func (s *costSource) SearchRows(ctx context.Context, ids []string) ([]SearchRow, error) {
	s.advance()
	return s.versionSource.SearchRows(ctx, ids)
}
