package main

import (
	"context"
	"errors"
)

func runCrash(context.Context, *Config) (*report, error) {
	return nil, errors.New("crash scenario: not written yet")
}

func runBadInput(context.Context, *Config, string, int) (*report, error) {
	return nil, errors.New("badinput scenario: not written yet")
}
