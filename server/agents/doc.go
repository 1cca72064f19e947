// Package agents serves assay's engines to AI agents: the Model Context
// Protocol (MCP, streamable HTTP, official Go SDK) and A2A 1.0 (JSON-RPC),
// each a route.Mount that a host lists in server.Config.Mounts. Both sell
// the same offers as the HTTP routes (read from the routing table), through
// the same Cashier, and report errors with the statuses and details of the
// HTTP routes (server.Server.Status); see MCP and A2A for each protocol's
// choices.
//
// The MCP SDK's own log lines (session start and end, three per call on
// the stateless transport) are logged at debug level, tagged
// component=mcp, without empty attributes; its warnings and errors keep
// their level.
//
// The package is separate from server so that a host that serves only HTTP
// links neither agent protocol.
package agents

import (
	"fmt"
)

func errorf(format string, args ...any) error {
	return fmt.Errorf("server: "+format, args...)
}
