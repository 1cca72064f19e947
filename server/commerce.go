package server

// CommerceConfig configures quotes, orders, receipts and customers. The zero value mounts nothing.
type CommerceConfig struct{}

// commerceRoutes returns the routes of quotes, orders, receipts and customers (none until configured).
func (s *Server) commerceRoutes() ([]*Route, error) { return nil, nil }

// commerceStatus maps the service's errors to statuses.
func commerceStatus(err error) (int, string, bool) { return 0, "", false }
