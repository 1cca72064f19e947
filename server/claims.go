package server

// ClaimsConfig configures claim verification. The zero value mounts nothing.
type ClaimsConfig struct{}

// claimsRoutes returns the routes of claim verification (none until configured).
func (s *Server) claimsRoutes() ([]*Route, error) { return nil, nil }

// claimsStatus maps the service's errors to statuses.
func claimsStatus(err error) (int, string, bool) { return 0, "", false }
