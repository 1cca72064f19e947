// Package discoverytest checks discovery documents against the definitions
// their publishers ship, vendored verbatim under testdata/ (see its
// README.md for the sources and commits): the MCP registry's server.json
// JSON Schema and the A2A 1.0 protocol definition (a2a.proto).
//
// It is for tests: the discovery package's own JSON Schemas state the rules
// assay relies on; these are the published ones that registries and
// clients apply.
//
// The A2A project publishes no JSON Schema of 1.0 in any repository (its
// 1.0 a2a.json is a documentation-site build artifact), so the agent card
// is checked against the proto's messages the way a protobuf JSON parser
// reads them: see CheckAgentCard; A2AMethods lists the proto's service,
// the JSON-RPC methods of A2A 1.0. The vendored proto is v1.0.0's: A2A
// 1.0.1 changed the specification document only, per its changelog (see
// testdata/README.md for what that means and what is left to check).
package discoverytest

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed testdata/mcp-registry-server-2025-12-11.schema.json testdata/a2a-v1.0.0.proto
var files embed.FS

// Names of the vendored files.
const (
	// MCPServerSchemaFile is the MCP registry's server.json schema of
	// 2025-12-11.
	MCPServerSchemaFile = "testdata/mcp-registry-server-2025-12-11.schema.json"
	// A2AProtoFile is a2a.proto of A2A v1.0.0.
	A2AProtoFile = "testdata/a2a-v1.0.0.proto"
	// MCPServerSchemaID is the $id (and the $schema our server.json
	// declares) of the vendored registry schema.
	MCPServerSchemaID = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
)

// File returns a vendored file by name.
func File(name string) ([]byte, error) { return files.ReadFile(name) }

var (
	mcpOnce   sync.Once
	mcpSchema *jsonschema.Schema
	mcpErr    error
)

// MCPServerSchema is the compiled registry schema, with format assertions
// on (the registry validates formats such as uri).
func MCPServerSchema() (*jsonschema.Schema, error) {
	mcpOnce.Do(func() {
		raw, err := files.ReadFile(MCPServerSchemaFile)
		if err != nil {
			mcpErr = err
			return
		}
		mcpSchema, mcpErr = CompileSchema(MCPServerSchemaID, raw)
	})
	return mcpSchema, mcpErr
}

// CompileSchema compiles the JSON Schema document raw as the resource id
// (a URL), with format assertions on: the discovery package's schemas
// (discovery.Schema) and the vendored ones are compiled the same way.
func CompileSchema(id string, raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(id, doc); err != nil {
		return nil, err
	}
	return c.Compile(id)
}

// ValidateServerJSON validates a server.json document against the
// registry's published schema.
func ValidateServerJSON(doc []byte) error {
	s, err := MCPServerSchema()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// ProtoField is one field of a proto message.
type ProtoField struct {
	Name     string // as declared (snake_case)
	JSONName string // lowerCamelCase, as protobuf JSON writes it
	Type     string // scalar, message or enum name; for maps the value type
	Repeated bool
	Map      bool
	Required bool // (google.api.field_behavior) = REQUIRED
}

var (
	protoOnce sync.Once
	protoMsgs map[string][]ProtoField
	protoEnum map[string]bool
	protoErr  error
)

// A2AMessages returns the messages (and the enum names) of the vendored
// a2a.proto.
func A2AMessages() (map[string][]ProtoField, map[string]bool, error) {
	protoOnce.Do(func() {
		raw, err := files.ReadFile(A2AProtoFile)
		if err != nil {
			protoErr = err
			return
		}
		protoMsgs, protoEnum, protoErr = ParseProto(string(raw))
	})
	return protoMsgs, protoEnum, protoErr
}

var (
	protoField = regexp.MustCompile(`^(optional\s+|repeated\s+)?(map\s*<\s*\w+\s*,\s*([\w.]+)\s*>|[\w.]+)\s+(\w+)\s*=\s*\d+\s*(\[[^\]]*\])?\s*;`)
	protoBlock = regexp.MustCompile(`^(message|enum|oneof)\s+(\w+)\s*\{`)
)

// ParseProto reads the messages and enums of a proto3 file: enough of the
// grammar for a2a.proto (fields, maps, oneofs, nested blocks, comments,
// options). Fields of a oneof belong to the enclosing message.
func ParseProto(src string) (map[string][]ProtoField, map[string]bool, error) {
	msgs := map[string][]ProtoField{}
	enums := map[string]bool{}
	type frame struct{ kind, name string }
	var stack []frame
	current := func() string {
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].kind == "message" {
				return stack[i].name
			}
		}
		return ""
	}
	for n, line := range strings.Split(src, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if m := protoBlock.FindStringSubmatch(line); m != nil {
			stack = append(stack, frame{m[1], m[2]})
			if _, ok := msgs[m[2]]; !ok && m[1] == "message" {
				msgs[m[2]] = []ProtoField{}
			}
			if m[1] == "enum" {
				enums[m[2]] = true
			}
			if strings.HasSuffix(line, "}") {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if strings.HasSuffix(line, "{") {
			stack = append(stack, frame{"other", ""})
			continue
		}
		if line == "}" || line == "};" {
			if len(stack) == 0 {
				return nil, nil, fmt.Errorf("line %d: unbalanced }", n+1)
			}
			stack = stack[:len(stack)-1]
			continue
		}
		msg := current()
		if msg == "" || (len(stack) > 0 && stack[len(stack)-1].kind != "message" && stack[len(stack)-1].kind != "oneof") {
			continue
		}
		m := protoField.FindStringSubmatch(line)
		if m == nil || m[4] == "reserved" || m[2] == "option" {
			continue
		}
		f := ProtoField{Name: m[4], JSONName: lowerCamel(m[4]), Type: m[2], Repeated: strings.HasPrefix(m[1], "repeated"),
			Required: strings.Contains(m[5], "REQUIRED")}
		if m[3] != "" {
			f.Map, f.Type = true, m[3]
		}
		msgs[msg] = append(msgs[msg], f)
	}
	if len(stack) != 0 {
		return nil, nil, errors.New("unbalanced braces")
	}
	return msgs, enums, nil
}

func lowerCamel(s string) string {
	var b strings.Builder
	up := false
	for _, r := range s {
		if r == '_' {
			up = true
			continue
		}
		if up && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		up = false
		b.WriteRune(r)
	}
	return b.String()
}

// ProtoMethod is one rpc of a proto service.
type ProtoMethod struct {
	Name     string // as declared: the JSON-RPC method name of A2A 1.0
	Request  string // request message
	Response string // response message (of each event when Stream)
	Stream   bool   // server streaming
}

var protoRPC = regexp.MustCompile(`(?m)^\s*rpc\s+(\w+)\s*\(\s*([\w.]+)\s*\)\s*returns\s*\(\s*(stream\s+)?([\w.]+)\s*\)`)

// A2AMethods returns the methods of the A2AService of the vendored
// a2a.proto, in declaration order: A2A 1.0's JSON-RPC binding calls each
// by its name, with its request message as params and its response
// message as result.
func A2AMethods() ([]ProtoMethod, error) {
	raw, err := files.ReadFile(A2AProtoFile)
	if err != nil {
		return nil, err
	}
	src := string(raw)
	i := strings.Index(src, "service A2AService {")
	if i < 0 {
		return nil, errors.New("a2a.proto has no A2AService")
	}
	var out []ProtoMethod
	for _, m := range protoRPC.FindAllStringSubmatch(src[i:], -1) {
		out = append(out, ProtoMethod{Name: m[1], Request: m[2], Response: m[4], Stream: m[3] != ""})
	}
	if len(out) == 0 {
		return nil, errors.New("A2AService declares no rpc")
	}
	return out, nil
}

// CheckAgentCard checks an agent card (JSON) against the AgentCard message
// of the vendored A2A 1.0 proto, as a protobuf JSON parser reads it: every
// member is a field of its message (protojson refuses unknown members),
// of the field's type, and every field marked REQUIRED is present and not
// empty. It returns every problem found, joined.
func CheckAgentCard(doc []byte) error {
	return CheckMessage("AgentCard", doc)
}

// CheckMessage checks JSON against any message of the vendored a2a.proto
// (see CheckAgentCard).
func CheckMessage(message string, doc []byte) error {
	msgs, enums, err := A2AMessages()
	if err != nil {
		return err
	}
	if _, ok := msgs[message]; !ok {
		return fmt.Errorf("a2a.proto has no message %s", message)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	c := &checker{msgs: msgs, enums: enums}
	c.message(message, v, "")
	return errors.Join(c.errs...)
}

type checker struct {
	msgs  map[string][]ProtoField
	enums map[string]bool
	errs  []error
}

func (c *checker) fail(path, format string, args ...any) {
	if path == "" {
		path = "/"
	}
	c.errs = append(c.errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
}

func (c *checker) message(name string, v any, path string) {
	obj, ok := v.(map[string]any)
	if !ok {
		c.fail(path, "want a %s object, got %T", name, v)
		return
	}
	fields := map[string]ProtoField{}
	for _, f := range c.msgs[name] {
		fields[f.JSONName] = f
		fields[f.Name] = f
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f, ok := fields[k]
		if !ok {
			c.fail(path+"/"+k, "%s has no field %q", name, k)
			continue
		}
		c.field(f, obj[k], path+"/"+k)
	}
	for _, f := range c.msgs[name] {
		if !f.Required {
			continue
		}
		val, ok := obj[f.JSONName]
		if !ok {
			val, ok = obj[f.Name]
		}
		if !ok || empty(val) {
			c.fail(path, "%s.%s is REQUIRED", name, f.JSONName)
		}
	}
}

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	}
	return false
}

func (c *checker) field(f ProtoField, v any, path string) {
	switch {
	case f.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			c.fail(path, "map %s: want an object, got %T", f.Name, v)
			return
		}
		for k, e := range obj {
			c.value(f.Type, e, path+"/"+k)
		}
	case f.Repeated:
		arr, ok := v.([]any)
		if !ok {
			c.fail(path, "repeated %s: want an array, got %T", f.Name, v)
			return
		}
		for i, e := range arr {
			c.value(f.Type, e, fmt.Sprintf("%s/%d", path, i))
		}
	default:
		c.value(f.Type, v, path)
	}
}

func (c *checker) known(msg string) bool {
	_, ok := c.msgs[msg]
	return ok
}

func (c *checker) value(typ string, v any, path string) {
	switch typ {
	case "string":
		if _, ok := v.(string); !ok {
			c.fail(path, "want a string, got %T", v)
		}
	case "bytes":
		if _, ok := v.(string); !ok {
			c.fail(path, "want base64 bytes, got %T", v)
		}
	case "bool":
		if _, ok := v.(bool); !ok {
			c.fail(path, "want a boolean, got %T", v)
		}
	case "int32", "uint32", "sint32", "fixed32", "sfixed32", "double", "float":
		if _, ok := v.(json.Number); !ok {
			c.fail(path, "want a number, got %T", v)
		}
	case "int64", "uint64", "sint64", "fixed64", "sfixed64":
		switch v.(type) {
		case json.Number, string:
		default:
			c.fail(path, "want an integer (number or string), got %T", v)
		}
	case "google.protobuf.Struct":
		if _, ok := v.(map[string]any); !ok {
			c.fail(path, "want an object (Struct), got %T", v)
		}
	case "google.protobuf.Value":
	case "google.protobuf.Timestamp":
		if _, ok := v.(string); !ok {
			c.fail(path, "want an RFC 3339 string (Timestamp), got %T", v)
		}
	default:
		switch {
		case c.enums[typ]:
			if _, ok := v.(string); !ok {
				c.fail(path, "want an enum name, got %T", v)
			}
		case c.known(typ):
			c.message(typ, v, path)
		default:
			c.fail(path, "unknown proto type %s", typ)
		}
	}
}
