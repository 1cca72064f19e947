package server

// NicheConfig configures niche discovery. The zero value mounts nothing.
type NicheConfig struct{}

// nicheRoutes returns the routes of niche discovery (none until configured).
func (s *Server) nicheRoutes() ([]*Route, error) { return nil, nil }

// nicheStatus maps the service's errors to statuses.
func nicheStatus(err error) (int, string, bool) { return 0, "", false }
