package agents

import (
	"errors"
	"net/http"

	"github.com/assaykit/assay/server/route"
)

// ErrNothingToServe is returned by MCPHandler and A2AHandler when the
// server has no service the endpoint would serve.
var ErrNothingToServe = errors.New("agents: the server mounts no service this endpoint serves")

// MCPHandler returns the MCP endpoint with every tool of s (what POST /mcp
// serves under Config.Mounts), for a host that mounts it on its own mux
// next to s or without it. It is the bare endpoint: the host's mux, not
// the server's router, applies body limits, CORS and request logging.
func MCPHandler(s route.Host, cfg MCP) (http.Handler, error) {
	return routeHandler(cfg, s, "mcp")
}

// A2AHandler returns the A2A endpoint of s (what POST {claims
// prefix}/a2a serves under Config.Mounts), for a host that mounts it on
// its own mux; as with MCPHandler, the host applies body limits, CORS and
// request logging.
func A2AHandler(s route.Host, cfg A2A) (http.Handler, error) {
	return routeHandler(cfg, s, "a2a")
}

func routeHandler(m route.Mount, s route.Host, id string) (http.Handler, error) {
	rs, err := m.Routes(s)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		if r.ID == id {
			return r.Handler, nil
		}
	}
	return nil, ErrNothingToServe
}
