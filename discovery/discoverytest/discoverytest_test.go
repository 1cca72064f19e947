package discoverytest_test

import (
	"strings"
	"testing"

	"github.com/assaykit/assay/discovery/discoverytest"
	"github.com/google/go-cmp/cmp"
)

func TestParseA2AProto(t *testing.T) {
	msgs, enums, err := discoverytest.A2AMessages()
	if err != nil {
		t.Fatal(err)
	}
	var required []string
	for _, f := range msgs["AgentCard"] {
		if f.Required {
			required = append(required, f.JSONName)
		}
	}
	want := []string{"name", "description", "supportedInterfaces", "version", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"}
	if d := cmp.Diff(want, required); d != "" {
		t.Errorf("AgentCard required fields (-want +got):\n%s", d)
	}
	if len(msgs["AgentCard"]) != 14 || !enums["TaskState"] || !enums["Role"] {
		t.Errorf("AgentCard has %d fields; enums %v", len(msgs["AgentCard"]), enums)
	}
	var part []string
	for _, f := range msgs["Part"] {
		part = append(part, f.JSONName)
	}
	if d := cmp.Diff([]string{"text", "raw", "url", "data", "metadata", "filename", "mediaType"}, part); d != "" {
		t.Errorf("Part (oneof members belong to the message) (-want +got):\n%s", d)
	}
	var schemes string
	for _, f := range msgs["AgentCard"] {
		if f.JSONName == "securitySchemes" {
			schemes = f.Type
			if !f.Map {
				t.Error("securitySchemes is not a map")
			}
		}
	}
	if schemes != "SecurityScheme" {
		t.Errorf("securitySchemes value type %q", schemes)
	}
}

func TestCheckAgentCard(t *testing.T) {
	good := `{"name":"A","description":"B","version":"1","supportedInterfaces":[{"url":"https://x/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
		"capabilities":{"streaming":true,"extensions":[{"uri":"https://www.x402.org/","required":true,"params":{"priceUsd":"0.05"}}]},
		"defaultInputModes":["text/plain"],"defaultOutputModes":["application/json"],
		"skills":[{"id":"s","name":"S","description":"D","tags":["t"]}]}`
	if err := discoverytest.CheckAgentCard([]byte(good)); err != nil {
		t.Fatalf("good card: %v", err)
	}
	for name, tc := range map[string]struct{ doc, want string }{
		"0.3 url":          {strings.Replace(good, `"name":"A"`, `"url":"https://x","name":"A"`, 1), `AgentCard has no field "url"`},
		"no skills":        {strings.Replace(good, `"skills":[{"id":"s","name":"S","description":"D","tags":["t"]}]`, `"skills":[]`, 1), "AgentCard.skills is REQUIRED"},
		"skill without id": {strings.Replace(good, `"id":"s",`, ``, 1), "AgentSkill.id is REQUIRED"},
		"bool as string":   {strings.Replace(good, `"streaming":true`, `"streaming":"yes"`, 1), "want a boolean"},
		"params not obj":   {strings.Replace(good, `"params":{"priceUsd":"0.05"}`, `"params":"x"`, 1), "want an object (Struct)"},
		"interface extra":  {strings.Replace(good, `"protocolVersion":"1.0"`, `"protocolVersion":"1.0","transport":"JSONRPC"`, 1), `AgentInterface has no field "transport"`},
	} {
		err := discoverytest.CheckAgentCard([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

func TestServerJSONSchema(t *testing.T) {
	good := `{"$schema":"` + discoverytest.MCPServerSchemaID + `","name":"io.github.x/y","description":"d","version":"1.0.0",
		"remotes":[{"type":"streamable-http","url":"https://api.example.com/mcp"}]}`
	if err := discoverytest.ValidateServerJSON([]byte(good)); err != nil {
		t.Fatalf("good: %v", err)
	}
	for name, doc := range map[string]string{
		"two slashes": strings.Replace(good, "io.github.x/y", "a/b/c", 1),
		"long":        strings.Replace(good, `"description":"d"`, `"description":"`+strings.Repeat("d", 101)+`"`, 1),
		"bad remote":  strings.Replace(good, `"streamable-http"`, `"websocket"`, 1),
		"no version":  strings.Replace(good, `,"version":"1.0.0"`, ``, 1),
	} {
		if err := discoverytest.ValidateServerJSON([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The A2A service of the vendored proto: its eleven methods, with the
// request and response messages the JSON-RPC binding uses.
func TestA2AMethods(t *testing.T) {
	ms, err := discoverytest.A2AMethods()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	want := []string{"SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask",
		"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs",
		"GetExtendedAgentCard", "DeleteTaskPushNotificationConfig"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("methods %v, want %v", names, want)
	}
	if m := ms[1]; m.Request != "SendMessageRequest" || m.Response != "StreamResponse" || !m.Stream {
		t.Errorf("SendStreamingMessage %+v", m)
	}
	if m := ms[2]; m.Request != "GetTaskRequest" || m.Response != "Task" || m.Stream {
		t.Errorf("GetTask %+v", m)
	}
}
