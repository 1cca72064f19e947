//go:build !unix

package main

// lockDataDir cannot lock on this platform: start-up then reconciles only
// orders older than the stale window, as with several instances.
func lockDataDir(string) (func(), error) { return nil, nil }
