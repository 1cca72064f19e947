package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// ResponsesAPI returns OpenAI's Responses API endpoint, POST /v1/responses. The
// request asks for a stream: a recorded response is replayed as the
// documented event sequence (ResponsesEvents).
func ResponsesAPI() API {
	return API{
		Path:      "/v1/responses",
		NotFound:  `{"error":{"message":"not found"}}`,
		RequestID: "x-request-id",
		Stream:    ResponsesEvents,
	}
}

// ResponsesEvents replays a recorded Responses API object as the documented
// stream: response.created (status in_progress, no output), then
// response.output_item.added and response.output_item.done for each
// output item, then response.completed, response.incomplete or
// response.failed carrying the whole response. A body that is not a
// response object is sent as the data of one event.
func ResponsesEvents(t testing.TB, body []byte) []byte {
	var compact bytes.Buffer
	var resp map[string]json.RawMessage
	if json.Compact(&compact, body) != nil || json.Unmarshal(body, &resp) != nil || resp["status"] == nil {
		return []byte("event: response.created\ndata: " + strings.ReplaceAll(string(body), "\n", " ") + "\n\n")
	}
	var out bytes.Buffer
	seq := 0
	event := func(typ string, fields string) {
		fmt.Fprintf(&out, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, seq, fields)
		seq++
	}
	created := map[string]json.RawMessage{}
	for k, v := range resp {
		created[k] = v
	}
	created["status"] = json.RawMessage(`"in_progress"`)
	created["output"] = json.RawMessage(`[]`)
	cb, err := json.Marshal(created)
	if err != nil {
		t.Fatal(err)
	}
	event("response.created", `"response":`+string(cb))
	var items []json.RawMessage
	_ = json.Unmarshal(resp["output"], &items)
	for i, it := range items {
		var c bytes.Buffer
		_ = json.Compact(&c, it)
		event("response.output_item.added", fmt.Sprintf(`"output_index":%d,"item":%s`, i, c.String()))
		event("response.output_item.done", fmt.Sprintf(`"output_index":%d,"item":%s`, i, c.String()))
	}
	var status string
	_ = json.Unmarshal(resp["status"], &status)
	final := "response.completed"
	switch status {
	case "incomplete":
		final = "response.incomplete"
	case "failed":
		final = "response.failed"
	}
	event(final, `"response":`+compact.String())
	return out.Bytes()
}
