// Package report is what the Go scenario programs of the compatibility matrix
// share: the step reporter (one JSON line per step on stdout) and the
// scenario's constants, the same in every language's program (see
// test/compat/clients.ts for the steps).
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Codecs are produced in this order; PerCodec keyed records each, over Partitions partitions.
var Codecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

const (
	PerCodec   = 10
	Partitions = 2
)

// Args returns the bootstrap address and the name prefix.
func Args() (string, string) {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: <program> BOOTSTRAP PREFIX")
		os.Exit(2)
	}
	return os.Args[1], os.Args[2]
}

func emit(step, status, detail string) {
	line, _ := json.Marshal(map[string]string{"step": step, "status": status, "detail": detail})
	fmt.Println(string(line))
}

// Step runs body: pass with what it returns, fail with its error or panic.
func Step(name string, body func() (string, error)) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			emit(name, "fail", fmt.Sprintf("panic: %v", r))
			ok = false
		}
	}()
	detail, err := body()
	if err != nil {
		emit(name, "fail", err.Error())
		return false
	}
	emit(name, "pass", detail)
	return true
}

// Unsupported reports a step the client does not have.
func Unsupported(name, why string) { emit(name, "unsupported", why) }

// WaitUntil calls tick (may be nil) and cond until cond is true, or fails naming what after d.
func WaitUntil(d time.Duration, what func() string, tick func(), cond func() bool) error {
	deadline := time.Now().Add(d)
	for {
		if tick != nil {
			tick()
		}
		if cond() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %s for %s", d, what())
		}
		if tick == nil {
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// Check returns an error with the message when cond is false.
func Check(cond bool, format string, args ...any) error {
	if cond {
		return nil
	}
	return fmt.Errorf(format, args...)
}
