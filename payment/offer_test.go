package payment

import (
	"sync"
	"testing"
)

func TestCallRecordsResultAndUsage(t *testing.T) {
	c := &Call{}
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.AddUsage(Usage{Provider: "p", InputTokens: 2, OutputTokens: 1, SearchCalls: 1})
		}()
	}
	wg.Wait()
	c.SetResult("verification", "cv_1")
	if k, id := c.Result(); k != "verification" || id != "cv_1" {
		t.Fatalf("Result = %s %s", k, id)
	}
	if u := c.Usage(); u.InputTokens != 20 || u.OutputTokens != 10 || u.SearchCalls != 10 || u.Provider != "p" {
		t.Fatalf("Usage = %+v", u)
	}
}
