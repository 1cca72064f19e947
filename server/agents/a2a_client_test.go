package agents

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/assaykit/assay/payment"
	"github.com/assaykit/assay/payment/gatetest"
	"github.com/assaykit/assay/payment/httpgate"
)

// headerCapture records the HTTP response headers the client gets.
type headerCapture struct {
	next http.RoundTripper
	mu   sync.Mutex
	last http.Header
}

func (h *headerCapture) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := h.next.RoundTrip(r)
	if err == nil {
		h.mu.Lock()
		h.last = resp.Header.Clone()
		h.mu.Unlock()
	}
	return resp, err
}

func (h *headerCapture) get(name string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last.Get(name)
}

// The official Go A2A client (a2a-go v2) pays through service parameters
// (HTTP headers), reads the completed task, reads it again with GetTask and
// the order token, and streams.
func TestA2AGoClient(t *testing.T) {
	env := newPaidEnv(t, nil)
	ctx := context.Background()
	card := &a2a.AgentCard{Name: "assay", Description: "claim verification", Version: "0.1.0",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(env.hs.URL+a2aPath, a2a.TransportProtocolJSONRPC)},
		Capabilities:        a2a.AgentCapabilities{Streaming: true}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"application/json"}}
	hc := &headerCapture{next: env.client.Transport}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(&http.Client{Transport: hc}))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Destroy()

	// Unpaid: the 402 surfaces as an error.
	if _, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(testClaim))}); err == nil || !strings.Contains(err.Error(), "402") {
		t.Fatalf("unpaid: %v", err)
	}
	paid := a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{gatetest.Header: {gatetest.Credential("0xccc", "go-1")}})
	res, err := client.SendMessage(paid, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(testClaim)),
		Metadata: map[string]any{"tier": "quick"}})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 2 {
		t.Fatalf("result %#v", res)
	}
	if !strings.HasPrefix(task.Artifacts[0].Parts[0].Text(), "Confirmed: ") || task.Artifacts[0].Parts[1].MediaType != "application/json" {
		t.Fatalf("parts %+v", task.Artifacts[0].Parts)
	}
	data, _ := task.Artifacts[0].Parts[1].Data().(map[string]any)
	if data["status"] != "confirmed" {
		t.Fatalf("data part %v", data)
	}
	o := env.order(string(task.ID))
	if o.Tier != "quick" || o.Status != payment.OrderCompleted {
		t.Fatalf("order %+v", o)
	}

	// GetTask with the order token of the call; a wrong token is refused.
	token := hc.get(httpgate.HeaderOrderToken)
	got, err := client.GetTask(a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{httpgate.HeaderOrderToken: {token}}), &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 {
		t.Fatalf("GetTask: %v %+v", err, got)
	}
	if _, err := client.GetTask(a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{httpgate.HeaderOrderToken: {"ort_nope"}}),
		&a2a.GetTaskRequest{ID: task.ID}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("wrong token: %v", err)
	}

	// Streaming, live: task, working updates, artifact, completed.
	var states []string
	for ev, err := range client.SendStreamingMessage(a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{gatetest.Header: {gatetest.Credential("0xccc", "go-2")}}),
		&a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(testClaim))}) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			states = append(states, "task:"+string(e.Status.State))
		case *a2a.TaskStatusUpdateEvent:
			states = append(states, string(e.Status.State))
		case *a2a.TaskArtifactUpdateEvent:
			states = append(states, "artifact")
		}
	}
	if len(states) != 8 || states[0] != "task:"+string(a2a.TaskStateSubmitted) || states[6] != "artifact" || states[7] != string(a2a.TaskStateCompleted) {
		t.Fatalf("stream %v", states)
	}
	if env.proc.Settled("0xccc", "go-2") != 1 {
		t.Fatal("stream not settled")
	}
}
