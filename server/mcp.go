package server

// mcpRoutes returns the MCP endpoint routes (none until built).
func (s *Server) mcpRoutes() ([]*Route, error) { return nil, nil }
