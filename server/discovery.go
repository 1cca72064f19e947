package server

// DiscoveryConfig configures the discovery documents. The zero value mounts nothing.
type DiscoveryConfig struct{}

// discoveryRoutes returns the routes of the discovery documents (none until configured).
func (s *Server) discoveryRoutes() ([]*Route, error) { return nil, nil }
