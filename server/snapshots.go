package server

// SnapshotsConfig configures URL snapshot retrieval. The zero value mounts nothing.
type SnapshotsConfig struct{}

// snapshotRoutes returns the routes of URL snapshot retrieval (none until configured).
func (s *Server) snapshotRoutes() ([]*Route, error) { return nil, nil }

// snapshotStatus maps the service's errors to statuses.
func snapshotStatus(err error) (int, string, bool) { return 0, "", false }
