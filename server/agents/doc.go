// Package agents serves assay's engines to AI agents: the Model Context
// Protocol (MCP, streamable HTTP, official Go SDK) and A2A 1.0 (JSON-RPC),
// each a server.Mount that a host lists in server.Config.Mounts. Both sell
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
	"strings"
)

func errorf(format string, args ...any) error {
	return fmt.Errorf("server: "+format, args...)
}

// priceUSD formats micro-USD with at least two decimals ("0.05", "1.00",
// "0.000001").
func priceUSD(micro int64) string {
	s := fmt.Sprintf("%d.%06d", micro/1000000, micro%1000000)
	s = strings.TrimRight(s, "0")
	if strings.HasSuffix(s, ".") {
		s += "00"
	} else if i := strings.IndexByte(s, '.'); len(s)-i == 2 {
		s += "0"
	}
	return s
}
