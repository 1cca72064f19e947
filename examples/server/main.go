// Command server runs the whole assay service on one machine with embedded
// defaults: SQLite under ./assay-data, listening on 127.0.0.1:8080.
//
//	go run ./examples/server            # start
//	go run ./examples/server -help      # every flag and its ASSAY_* variable
//
// Every flag can also be set with the environment variable named in its
// help text; a flag given on the command line wins over the variable.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "assay:", err)
		os.Exit(1)
	}
}
