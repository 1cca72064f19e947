package server

// a2aRoutes returns the A2A endpoint routes (none until built).
func (s *Server) a2aRoutes() ([]*Route, error) { return nil, nil }
