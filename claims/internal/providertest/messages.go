package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// MessagesAPI returns Anthropic's Messages API endpoint, POST /v1/messages,
// answering with MessagesEvents.
func MessagesAPI() API {
	return API{
		Path:      "/v1/messages",
		NotFound:  `{"type":"error","error":{"type":"not_found_error","message":"not found"}}`,
		RequestID: "request-id",
		Stream:    MessagesEvents,
	}
}

// MessagesEvents replays a recorded Message as the documented stream:
// message_start (no content, output_tokens 1), then per content block
// content_block_start, its deltas (input_json_delta for a server_tool_use
// input, citations_delta and text_delta for text; a web_search_tool_result
// arrives whole in its start) and content_block_stop, then message_delta
// with the stop reason and the cumulative usage, and message_stop.
func MessagesEvents(t testing.TB, body []byte) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("recorded message: %v", err)
	}
	var out bytes.Buffer
	event := func(typ string, v map[string]any) {
		v["type"] = typ
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "event: %s\ndata: %s\n\n", typ, b)
	}
	var usage map[string]any
	_ = json.Unmarshal(m["usage"], &usage)
	start := map[string]any{}
	for k, v := range m {
		start[k] = v
	}
	start["content"] = []any{}
	start["stop_reason"] = nil
	start["usage"] = map[string]any{"input_tokens": usage["input_tokens"], "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
		"cache_read_input_tokens": usage["cache_read_input_tokens"], "output_tokens": 1}
	event("message_start", map[string]any{"message": start})
	fmt.Fprintf(&out, "event: ping\ndata: {\"type\": \"ping\"}\n\n")
	var blocks []map[string]json.RawMessage
	_ = json.Unmarshal(m["content"], &blocks)
	for i, b := range blocks {
		var typ string
		_ = json.Unmarshal(b["type"], &typ)
		switch typ {
		case "text":
			event("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			var cites []json.RawMessage
			_ = json.Unmarshal(b["citations"], &cites)
			for _, c := range cites {
				event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "citations_delta", "citation": c}})
			}
			var text string
			_ = json.Unmarshal(b["text"], &text)
			for len(text) > 0 { // deltas of at most 40 bytes
				k := min(40, len(text))
				for k < len(text) && !utf8Start(text[k]) {
					k++
				}
				event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": text[:k]}})
				text = text[k:]
			}
		case "server_tool_use":
			startBlock := map[string]any{"type": typ, "id": b["id"], "name": b["name"], "input": map[string]any{}}
			event("content_block_start", map[string]any{"index": i, "content_block": startBlock})
			event("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(b["input"])}})
		default:
			event("content_block_start", map[string]any{"index": i, "content_block": b})
		}
		event("content_block_stop", map[string]any{"index": i})
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": m["stop_reason"], "stop_sequence": nil}, "usage": usage})
	event("message_stop", map[string]any{})
	return out.Bytes()
}

func utf8Start(c byte) bool { return c&0xC0 != 0x80 }
