//go:build heavy

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestDeadlineScaledDown runs the load program scaled down (100 calls, a
// 4 s deadline, the answer 0.5 s before it, a fifth of the DNS queries
// dropped) and checks its target: no provider answer thrown away by the
// candidate, every charged call delivered, and a baseline measured in the
// same run. It takes about half a minute, so it is heavy.
func TestDeadlineScaledDown(t *testing.T) {
	var out bytes.Buffer
	ok, err := run(context.Background(), config{Calls: 100, Timeout: 4 * time.Second, AnswerBefore: 500 * time.Millisecond,
		DropPercent: 20, PageDelay: 50 * time.Millisecond, Out: &out})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if !ok || !strings.Contains(out.String(), "answers thrown away: 0 (baseline ") || !strings.Contains(out.String(), "ratios against baseline: ") {
		t.Fatal("target missed")
	}
}
