//lint:file-ignore SA1019 the suites' scenarios call sampling, roots and logging, which protocol 2026-07-28 deprecates (SEP-2577) but still serves.

package agents

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The conformance mode of the test server: what the official MCP
// conformance suites (@modelcontextprotocol/conformance 0.1.16 for
// protocol 2025-11-25, 0.2.0-alpha.12 for 2026-07-28) call on a server
// under test beside its own tools — the tools, prompts and resources of
// their reference server, whose names and answers the suites' scenarios
// state. addConformanceFixtures adds them to an endpoint's server through
// MCP.conformance, which only this package's tests can set: the product
// never serves them. They exercise the protocol machinery of assay's
// endpoints (content types, progress, errors, prompts, resources,
// multi-round input requests, SEP-2575's capability and logging rules) on
// the same servers, handlers and middleware as the product's tools; they
// do not change what the endpoints declare (tools, prompts and resources,
// declared by the product whether or not anything is listed).

// fixturePNG is a 1×1 PNG and fixtureWAV an empty WAV file (bytes
// written out, not decoded at run time).
var (
	fixturePNG = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1,
		8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 13, 'I', 'D', 'A', 'T', 0x78, 0xda, 0x63, 0xfc, 0xcf, 0xc0, 0xf0,
		0x1f, 0, 5, 5, 2, 0, 0x5f, 0xc8, 0xf1, 0xd2, 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 'B', 0x60, 0x82}
	fixtureWAV = []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00")
)

// conformanceFixtures returns the function that adds the fixtures to a
// server. Each call has its own key for the integrity of requestState.
func conformanceFixtures() func(*mcp.Server) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	f := &fixtures{key: key}
	return f.add
}

type fixtures struct{ key []byte }

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// noArgs is the input schema of the fixture tools.
var noArgs = json.RawMessage(`{"type":"object"}`)

func (f *fixtures) add(s *mcp.Server) {
	tool := func(name string, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, Description: "Conformance fixture " + name + " (test server only).", InputSchema: noArgs}, h)
	}
	tool("test_simple_text", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("This is a simple text response for testing."), nil
	})
	tool("test_image_content", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: fixturePNG, MIMEType: "image/png"}}}, nil
	})
	tool("test_audio_content", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: fixtureWAV, MIMEType: "audio/wav"}}}, nil
	})
	embedded := func(uri string) *mcp.EmbeddedResource {
		return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: "This is an embedded resource"}}
	}
	tool("test_embedded_resource", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{embedded("test://embedded-resource")}}, nil
	})
	tool("test_multiple_content_types", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "This is text content"},
			&mcp.ImageContent{Data: fixturePNG, MIMEType: "image/png"}, embedded("test://embedded-in-multiple")}}, nil
	})
	tool("test_error_handling", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text("This tool intentionally returns an error for testing")
		r.IsError = true
		return r, nil
	})
	tool("test_tool_with_progress", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tok := req.Params.GetProgressToken()
		for _, p := range []float64{0, 50, 100} {
			if tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: p, Total: 100,
					Message: fmt.Sprintf("step %.0f of 100", p)})
			}
		}
		return text(fmt.Sprint(tok)), nil
	})
	logTool := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for _, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: m})
		}
		return text("Tool with logging executed successfully"), nil
	}
	tool("test_tool_with_logging", logTool)
	// Server-to-client requests of protocol 2025-11-25 (sampling,
	// elicitation): the stateless endpoints refuse to send them, which is
	// what the 2025-11-25 baseline records; 2026-07-28's input requests
	// below replace them.
	tool("test_sampling", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 100,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Say hello"}}}})
		if err != nil {
			return nil, err
		}
		return text(fmt.Sprintf("LLM response: %v", res.Content)), nil
	})
	elicit := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: objectSchema("name", "string")})
		if err != nil {
			return nil, err
		}
		return text("elicitation " + res.Action), nil
	}
	for _, name := range []string{"test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums"} {
		tool(name, elicit)
	}
	// SEP-2575 (server-stateless): a tool that needs the sampling client
	// capability, one whose stream must carry no request, one that logs
	// (dropped unless the request set a log level).
	tool("test_missing_capability", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if c := req.ClientCapabilities(); c != nil && c.Sampling != nil {
			return text("The client declared sampling."), nil
		}
		data, _ := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}})
		return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "This tool needs the sampling capability", Data: data}
	})
	tool("test_streaming_elicitation", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 1})
		}
		return text("Only the result travels on this stream."), nil
	})
	tool("test_logging_tool", logTool)
	// SEP-2322: multi-round input requests.
	nameSchema := objectSchema("name", "string")
	tool("test_input_required_result_elicitation", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if name, _ := accepted(req.Params.InputResponses, "user_name")["name"].(string); name != "" {
			return text("Hello, " + name + "!"), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"user_name": &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: nameSchema}}}, nil
	})
	capital := &mcp.CreateMessageParams{MaxTokens: 100,
		Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "What is the capital of France?"}}}}
	tool("test_input_required_result_sampling", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if answer, ok := sampled(req.Params.InputResponses, "capital_question"); ok {
			return text("The model answered: " + answer), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"capital_question": capital}}, nil
	})
	tool("test_input_required_result_list_roots", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if roots, ok := req.Params.InputResponses["client_roots"].(*mcp.ListRootsResult); ok && roots != nil {
			var uris []string
			for _, r := range roots.Roots {
				uris = append(uris, r.URI)
			}
			return text(fmt.Sprintf("%d root(s): %s", len(uris), strings.Join(uris, ", "))), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"client_roots": &mcp.ListRootsParams{}}}, nil
	})
	confirm := func() mcp.InputRequestMap {
		return mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "Please confirm", RequestedSchema: objectSchema("ok", "boolean")}}
	}
	stateTool := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.RequestState != "" {
			if _, ok := f.open(req.Params.RequestState); !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState failed its integrity check"}
			}
			if accepted(req.Params.InputResponses, "confirm") != nil {
				return text("state-ok: the requestState verified and the confirmation arrived"), nil
			}
		}
		return &mcp.CallToolResult{InputRequests: confirm(), RequestState: f.seal("confirm")}, nil
	}
	tool("test_input_required_result_request_state", stateTool)
	tool("test_input_required_result_tampered_state", stateTool)
	tool("test_input_required_result_multiple_inputs", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		in := req.Params.InputResponses
		name, _ := accepted(in, "user_name")["name"].(string)
		greeting, greeted := sampled(in, "greeting")
		roots, rooted := in["client_roots"].(*mcp.ListRootsResult)
		if _, ok := f.open(req.Params.RequestState); ok && name != "" && greeted && rooted && roots != nil {
			return text(fmt.Sprintf("%s %s (%d roots)", greeting, name, len(roots.Roots))), nil
		}
		return &mcp.CallToolResult{RequestState: f.seal("multiple"), InputRequests: mcp.InputRequestMap{
			"user_name": &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: nameSchema},
			"greeting": &mcp.CreateMessageParams{MaxTokens: 50,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Generate a greeting"}}}},
			"client_roots": &mcp.ListRootsParams{},
		}}, nil
	})
	tool("test_input_required_result_multi_round", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		state, _ := f.open(req.Params.RequestState)
		switch {
		case strings.HasPrefix(state, "round2:"):
			color, _ := accepted(req.Params.InputResponses, "step2")["color"].(string)
			return text(fmt.Sprintf("%s likes %s", strings.TrimPrefix(state, "round2:"), color)), nil
		case state == "round1":
			name, _ := accepted(req.Params.InputResponses, "step1")["name"].(string)
			return &mcp.CallToolResult{RequestState: f.seal("round2:" + name), InputRequests: mcp.InputRequestMap{
				"step2": &mcp.ElicitParams{Message: "Step 2: What is your favorite color?", RequestedSchema: objectSchema("color", "string")}}}, nil
		}
		return &mcp.CallToolResult{RequestState: f.seal("round1"), InputRequests: mcp.InputRequestMap{
			"step1": &mcp.ElicitParams{Message: "Step 1: What is your name?", RequestedSchema: nameSchema}}}, nil
	})
	tool("test_input_required_result_capabilities", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if len(req.Params.InputResponses) > 0 {
			return text("The declared capabilities' input arrived."), nil
		}
		c := req.ClientCapabilities()
		asks := mcp.InputRequestMap{}
		if c != nil && c.Elicitation != nil {
			asks["user_name"] = &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: nameSchema}
		}
		if c != nil && c.Sampling != nil {
			asks["capital_question"] = capital
		}
		if len(asks) == 0 {
			return text("The client declared no capability to ask it for input."), nil
		}
		return &mcp.CallToolResult{InputRequests: asks}, nil
	})
	// SEP-1613 and SEP-2106: a 2020-12 schema listed verbatim.
	s.AddTool(&mcp.Tool{Name: "json_schema_2020_12_tool", Description: "Conformance fixture with JSON Schema 2020-12 keywords (test server only).",
		InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
			`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
			`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},` +
			`"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
			`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},` +
			`"else":{"required":["email"]},"additionalProperties":false}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("called with " + string(req.Params.Arguments)), nil
		})
	// SEP-2243: an argument mirrored into an Mcp-Param-* header.
	s.AddTool(&mcp.Tool{Name: "test_x_mcp_header", Description: "Conformance fixture for Mcp-Param headers (test server only).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"level":{"type":"integer"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Region string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return text("region=" + in.Region), nil
		})

	// Resources.
	s.AddResource(&mcp.Resource{Name: "static-text", URI: "test://static-text", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain",
				Text: "This is the content of the static text resource."}}}, nil
		})
	s.AddResource(&mcp.Resource{Name: "static-binary", URI: "test://static-binary", MIMEType: "image/png"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: fixturePNG}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "template", URITemplate: "test://template/{id}/data", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id, ok := strings.CutPrefix(req.Params.URI, "test://template/")
			id, found := strings.CutSuffix(id, "/data")
			if !ok || !found || id == "" || strings.Contains(id, "/") {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			b, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
		})

	// Prompts.
	prompt := func(p *mcp.Prompt, msgs ...*mcp.PromptMessage) {
		s.AddPrompt(p, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: p.Description, Messages: msgs}, nil
		})
	}
	user := func(c mcp.Content) *mcp.PromptMessage { return &mcp.PromptMessage{Role: "user", Content: c} }
	prompt(&mcp.Prompt{Name: "test_simple_prompt", Description: "A prompt without arguments"},
		user(&mcp.TextContent{Text: "This is a simple prompt for testing."}))
	prompt(&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"},
		user(&mcp.ImageContent{Data: fixturePNG, MIMEType: "image/png"}), user(&mcp.TextContent{Text: "Please analyze the image above."}))
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two required arguments",
		Arguments: []*mcp.PromptArgument{{Name: "arg1", Required: true}, {Name: "arg2", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(&mcp.TextContent{
				Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt with an embedded resource",
		Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				user(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain",
					Text: "Embedded resource content for testing."}}),
				user(&mcp.TextContent{Text: "Please process the embedded resource above."})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks the client for context"},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if c := accepted(req.Params.InputResponses, "user_context"); c != nil {
				ctxText, _ := c["context"].(string)
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(&mcp.TextContent{Text: "Context: " + ctxText})}}, nil
			}
			return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"user_context": &mcp.ElicitParams{
				Message: "What context should the prompt use?", RequestedSchema: objectSchema("context", "string")}}}, nil
		})
}

// objectSchema is {"type":"object","properties":{name:{"type":typ}},"required":[name]}.
func objectSchema(name, typ string) map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{name: map[string]any{"type": typ}}, "required": []string{name}}
}

// accepted is the content of an accepted elicitation answer, or nil.
func accepted(in mcp.InputResponseMap, key string) map[string]any {
	r, ok := in[key].(*mcp.ElicitResult)
	if !ok || r == nil || r.Action != "accept" {
		return nil
	}
	return r.Content
}

// sampled is the text of a sampling answer (the SDK reads every sampling
// answer as the with-tools form, whose content is a list).
func sampled(in mcp.InputResponseMap, key string) (string, bool) {
	r, ok := in[key].(*mcp.CreateMessageWithToolsResult)
	if !ok || r == nil {
		return "", false
	}
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " "), true
}

// seal protects a requestState with an HMAC: "<base64 state>.<hex mac>".
func (f *fixtures) seal(state string) string {
	m := hmac.New(sha256.New, f.key)
	m.Write([]byte(state))
	return base64.RawURLEncoding.EncodeToString([]byte(state)) + "." + hex.EncodeToString(m.Sum(nil))
}

// open checks and reads a sealed requestState.
func (f *fixtures) open(sealed string) (string, bool) {
	enc, mac, ok := strings.Cut(sealed, ".")
	if !ok {
		return "", false
	}
	state, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return "", false
	}
	got, err := hex.DecodeString(mac)
	if err != nil {
		return "", false
	}
	m := hmac.New(sha256.New, f.key)
	m.Write(state)
	if !hmac.Equal(got, m.Sum(nil)) {
		return "", false
	}
	return string(state), true
}
