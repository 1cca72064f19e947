// Command server runs the whole assay service on one machine with embedded
// defaults: SQLite under ./assay-data, listening on 127.0.0.1:8080.
//
//	go run ./examples/server            # start
//	go run ./examples/server -help      # every flag and its ASSAY_* variable
//
// Every flag can also be set with the environment variable named in its
// help text; a flag given on the command line wins over the variable. The
// whole configuration is checked before anything starts, and every problem
// is reported at once (exit status 2). Logs go to stderr, the listening
// address first.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(exitCode(run(ctx, os.Args[1:], os.Getenv, os.Stderr, nil)))
}

// exitCode is the exit status for run's error: 0 for none and for -help, 2
// for a configuration problem (nothing was started), 1 for a failure at
// start-up or while serving. The error is printed on stderr.
func exitCode(err error) int {
	var ce *ConfigError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ce):
		fmt.Fprintln(os.Stderr, "assay:", err)
		return 2
	default:
		fmt.Fprintln(os.Stderr, "assay:", err)
		return 1
	}
}
