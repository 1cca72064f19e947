package agents

// Wire shapes of A2A 1.0 (JSON-RPC binding, protobuf JSON names), as far as
// this agent uses them.

import (
	"bytes"
	"encoding/json"
	"time"
)

// A2A 1.0 task states and roles.
const (
	a2aSubmitted = "TASK_STATE_SUBMITTED"
	a2aWorking   = "TASK_STATE_WORKING"
	a2aCompleted = "TASK_STATE_COMPLETED"
	a2aFailed    = "TASK_STATE_FAILED"
	a2aCanceled  = "TASK_STATE_CANCELED"
	a2aRejected  = "TASK_STATE_REJECTED"

	a2aRoleUser  = "ROLE_USER"
	a2aRoleAgent = "ROLE_AGENT"
)

// a2aTerminal reports whether a task in state can change no more.
func a2aTerminal(state string) bool {
	switch state {
	case a2aCompleted, a2aFailed, a2aCanceled, a2aRejected:
		return true
	}
	return false
}

// a2aPart is a Part: exactly one of text, data, url or raw.
type a2aPart struct {
	Text      *string         `json:"text,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	URL       *string         `json:"url,omitempty"`
	Raw       *string         `json:"raw,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
}

// a2aMessage is a Message.
type a2aMessage struct {
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             string         `json:"role"`
	Parts            []a2aPart      `json:"parts"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
}

// a2aTaskStatus is a TaskStatus.
type a2aTaskStatus struct {
	State     string      `json:"state"`
	Message   *a2aMessage `json:"message,omitempty"`
	Timestamp string      `json:"timestamp,omitempty"`
}

// a2aArtifact is an Artifact.
type a2aArtifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []a2aPart      `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// a2aTask is a Task.
type a2aTask struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    a2aTaskStatus  `json:"status"`
	Artifacts []a2aArtifact  `json:"artifacts,omitempty"`
	History   []a2aMessage   `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// a2aStatusUpdate is a TaskStatusUpdateEvent.
type a2aStatusUpdate struct {
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    a2aTaskStatus  `json:"status"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// a2aArtifactUpdate is a TaskArtifactUpdateEvent.
type a2aArtifactUpdate struct {
	TaskID    string      `json:"taskId"`
	ContextID string      `json:"contextId"`
	Artifact  a2aArtifact `json:"artifact"`
	Append    bool        `json:"append,omitempty"`
	LastChunk bool        `json:"lastChunk,omitempty"`
}

// a2aEvent is a StreamResponse (and, with Task set, a SendMessageResponse):
// exactly one member is set.
type a2aEvent struct {
	Task           *a2aTask           `json:"task,omitempty"`
	Message        *a2aMessage        `json:"message,omitempty"`
	StatusUpdate   *a2aStatusUpdate   `json:"statusUpdate,omitempty"`
	ArtifactUpdate *a2aArtifactUpdate `json:"artifactUpdate,omitempty"`
}

// a2aSendParams is a SendMessageRequest.
type a2aSendParams struct {
	Tenant        string          `json:"tenant,omitempty"`
	Message       *a2aMessage     `json:"message"`
	Configuration json.RawMessage `json:"configuration,omitempty"`
	Metadata      map[string]any  `json:"metadata,omitempty"`
}

// a2aTaskParams is a GetTaskRequest or CancelTaskRequest.
type a2aTaskParams struct {
	Tenant        string `json:"tenant,omitempty"`
	ID            string `json:"id"`
	HistoryLength *int   `json:"historyLength,omitempty"`
}

// rpcError is a JSON-RPC error; in A2A 1.0 data is an array of typed
// objects (google.rpc.ErrorInfo first).
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    []any  `json:"data,omitempty"`
}

// rpcResponse is a JSON-RPC 2.0 response.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
	// Detail repeats the HTTP route's detail on answers to calls that
	// failed after payment, so that the gate records the same order
	// failure reason as for HTTP ("handler answered 502: Evidence
	// provider failed"). JSON-RPC clients ignore the extra member.
	Detail string `json:"detail,omitempty"`
}

// JSON-RPC and A2A error codes.
const (
	rpcParseError          = -32700
	rpcInvalidRequest      = -32600
	rpcMethodNotFound      = -32601
	rpcInvalidParams       = -32602
	rpcInternalError       = -32603
	a2aTaskNotFound        = -32001
	a2aTaskNotCancelable   = -32002
	a2aPushNotSupported    = -32003
	a2aUnsupportedOp       = -32004
	a2aContentTypeNotSupp  = -32005
	a2aExtendedCardMissing = -32007
	a2aVersionNotSupported = -32009
)

// rpcReasons are the ErrorInfo reasons of the codes.
var rpcReasons = map[int]string{
	rpcParseError: "PARSE_ERROR", rpcInvalidRequest: "INVALID_REQUEST", rpcMethodNotFound: "METHOD_NOT_FOUND",
	rpcInvalidParams: "INVALID_PARAMS", rpcInternalError: "INTERNAL_ERROR", a2aTaskNotFound: "TASK_NOT_FOUND",
	a2aTaskNotCancelable: "TASK_NOT_CANCELABLE", a2aPushNotSupported: "PUSH_NOTIFICATION_NOT_SUPPORTED",
	a2aUnsupportedOp: "UNSUPPORTED_OPERATION", a2aContentTypeNotSupp: "CONTENT_TYPE_NOT_SUPPORTED",
	a2aExtendedCardMissing: "EXTENDED_AGENT_CARD_NOT_CONFIGURED", a2aVersionNotSupported: "VERSION_NOT_SUPPORTED",
}

const (
	typeErrorInfo = "type.googleapis.com/google.rpc.ErrorInfo"
	typeStruct    = "type.googleapis.com/google.protobuf.Struct"
	a2aDomain     = "a2a-protocol.org"
)

// newRPCError builds an A2A 1.0 error: ErrorInfo with the code's reason and
// metadata, then, when detail is set, a google.protobuf.Struct carrying
// {"detail": detail} (the HTTP routes' error body).
func newRPCError(code int, msg string, meta map[string]string, detail any) *rpcError {
	info := map[string]any{"@type": typeErrorInfo, "reason": rpcReasons[code], "domain": a2aDomain, "metadata": map[string]string{}}
	if len(meta) > 0 {
		info["metadata"] = meta
	}
	e := &rpcError{Code: code, Message: msg, Data: []any{info}}
	if detail != nil {
		e.Data = append(e.Data, map[string]any{"@type": typeStruct, "value": map[string]any{"detail": detail}})
	}
	return e
}

// rpcID returns the id to answer with: the request's, or null.
func rpcID(id json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(id)) == 0 {
		return json.RawMessage("null")
	}
	return id
}

func a2aNow() string { return time.Now().UTC().Format(time.RFC3339Nano) }
