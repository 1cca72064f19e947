package agents

import (
	"fmt"
	"strings"
	"testing"

	"github.com/assaykit/assay/discovery/discoverytest"
	"github.com/assaykit/assay/payment/httpgate"
)

// TestA2AMethodsOfTheProto checks the A2A endpoint against the service of
// the vendored A2A proto (discoverytest.A2AMethods): every method it
// declares is answered — with its response message (checked against the
// proto as protobuf JSON parsers read it: SendMessageResponse,
// StreamResponse for each event, Task), or with an A2A error naming why
// it is not served (never "method not found") — and a method the proto
// does not declare (a 0.3 name) is "method not found".
func TestA2AMethodsOfTheProto(t *testing.T) {
	env := newPaidEnv(t, &envOptions{paywall: httpgate.Free{}})
	methods, err := discoverytest.A2AMethods()
	if err != nil {
		t.Fatal(err)
	}
	// A task to read and cancel.
	_, b := env.post(a2aPath, sendBody("SendMessage", testClaim, nil), a2aHeaders())
	taskID := decodeRPC(t, b).task(t).ID
	params := map[string]string{
		"SendMessage":                      `{"message":{"messageId":"m-2","role":"ROLE_USER","parts":[{"text":"` + testClaim + `"}]}}`,
		"SendStreamingMessage":             `{"message":{"messageId":"m-3","role":"ROLE_USER","parts":[{"text":"` + testClaim + `"}]}}`,
		"GetTask":                          fmt.Sprintf(`{"id":%q}`, taskID),
		"ListTasks":                        `{}`,
		"CancelTask":                       fmt.Sprintf(`{"id":%q}`, taskID),
		"SubscribeToTask":                  fmt.Sprintf(`{"id":%q}`, taskID),
		"CreateTaskPushNotificationConfig": fmt.Sprintf(`{"taskId":%q,"url":"https://example.com/hook"}`, taskID),
		"GetTaskPushNotificationConfig":    fmt.Sprintf(`{"taskId":%q,"id":"c1"}`, taskID),
		"ListTaskPushNotificationConfigs":  fmt.Sprintf(`{"taskId":%q}`, taskID),
		"GetExtendedAgentCard":             `{}`,
		"DeleteTaskPushNotificationConfig": fmt.Sprintf(`{"taskId":%q,"id":"c1"}`, taskID),
	}
	for _, m := range methods {
		p, ok := params[m.Name]
		if !ok {
			t.Errorf("the proto declares %s, which this test does not call: add it", m.Name)
			continue
		}
		if err := discoverytest.CheckMessage(m.Request, []byte(p)); err != nil {
			t.Errorf("%s: the test's params are not a %s: %v", m.Name, m.Request, err)
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, m.Name, p)
		st, b := env.post(a2aPath, body, a2aHeaders())
		if st != 200 {
			t.Errorf("%s: HTTP %d %s", m.Name, st, b)
			continue
		}
		var answers []rpcAnswer
		if m.Stream && strings.HasPrefix(string(b), "data: ") {
			sseEvents(t, strings.NewReader(string(b)), func(a rpcAnswer, _ a2aEvent) bool { answers = append(answers, a); return true })
		} else {
			answers = append(answers, decodeRPC(t, b))
		}
		for _, a := range answers {
			switch {
			case a.Error != nil && a.Error.Code == rpcMethodNotFound:
				t.Errorf("%s: method not found, but the proto declares it", m.Name)
			case a.Error != nil && (a.Error.Code > -32001 || a.Error.Code < -32099):
				t.Errorf("%s: error %d %q is not an A2A error", m.Name, a.Error.Code, a.Error.Message)
			case a.Error == nil:
				if err := discoverytest.CheckMessage(m.Response, a.Result); err != nil {
					t.Errorf("%s: the result is not a %s: %v\n%s", m.Name, m.Response, err, a.Result)
				}
			}
		}
		t.Logf("%s: %d answer(s), first %s", m.Name, len(answers), firstLine(b))
	}
	for _, old := range []string{"message/send", "tasks/get", "tasks/cancel", "agent/getAuthenticatedExtendedCard"} {
		_, b := env.post(a2aPath, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{}}`, old), a2aHeaders())
		if a := decodeRPC(t, b); a.Error == nil || a.Error.Code != rpcMethodNotFound {
			t.Errorf("%s (not in the proto): %s", old, b)
		}
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
