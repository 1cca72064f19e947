package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
)

// config is the example server's configuration, from flags and ASSAY_*
// environment variables.
type config struct {
	Addr         string
	DataDir      string
	PostgresURL  string
	LogLevel     string
	LogFormat    string
	MaxBodyBytes int64
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	ShutdownWait time.Duration
	AdminKey     string
}

// parseConfig reads flags from args, falling back to environment variables
// and then to defaults. It returns flag.ErrHelp for -help.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(out)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	str := func(p *string, name, envName, def, usage string) {
		fs.StringVar(p, name, env(envName, def), fmt.Sprintf("%s (env %s)", usage, envName))
	}
	dur := func(p *time.Duration, name, envName string, def time.Duration, usage string) {
		d := def
		if v := getenv(envName); v != "" {
			if parsed, err := time.ParseDuration(v); err == nil {
				d = parsed
			}
		}
		fs.DurationVar(p, name, d, fmt.Sprintf("%s (env %s)", usage, envName))
	}
	str(&c.Addr, "addr", "ASSAY_ADDR", "127.0.0.1:8080", "listen address")
	str(&c.DataDir, "data", "ASSAY_DATA", "./assay-data", "directory for the SQLite database and snapshot files")
	str(&c.PostgresURL, "postgres", "ASSAY_POSTGRES_URL", "", "PostgreSQL URL; when set, used instead of SQLite (several instances may share it)")
	str(&c.LogLevel, "log-level", "ASSAY_LOG_LEVEL", "info", "log level: debug, info, warn, error")
	str(&c.LogFormat, "log-format", "ASSAY_LOG_FORMAT", "text", "log format: text or json")
	str(&c.AdminKey, "admin-key", "ASSAY_ADMIN_KEY", "", "key for /v1/admin routes (empty: admin routes disabled)")
	maxBody := env("ASSAY_MAX_BODY_BYTES", "1048576")
	fs.Func("max-body", "largest request body in bytes (env ASSAY_MAX_BODY_BYTES, default 1048576)", func(s string) error {
		maxBody = s
		return nil
	})
	dur(&c.ReadTimeout, "read-timeout", "ASSAY_READ_TIMEOUT", 30*time.Second, "time to read a request")
	dur(&c.WriteTimeout, "write-timeout", "ASSAY_WRITE_TIMEOUT", 150*time.Second, "time to write a response (covers a 120 s verification)")
	dur(&c.ShutdownWait, "shutdown-wait", "ASSAY_SHUTDOWN_WAIT", 130*time.Second, "how long shutdown waits for in-flight calls")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if _, err := fmt.Sscan(maxBody, &c.MaxBodyBytes); err != nil || c.MaxBodyBytes <= 0 {
		return nil, fmt.Errorf("max body bytes: invalid value %q", maxBody)
	}
	return c, nil
}

func (c *config) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(c.LogFormat) {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format: %q is neither text nor json", c.LogFormat)
}
