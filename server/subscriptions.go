package server

// SubscriptionConfig configures the niche subscription routes. The zero
// value mounts nothing.
type SubscriptionConfig struct{}

// subscriptionRoutes returns the subscription routes (none until configured).
func (s *Server) subscriptionRoutes() ([]*Route, error) { return nil, nil }
