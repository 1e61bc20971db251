package main

import (
	"context"
	"os"

	"github.com/kbatch-dev/kbatch/consumer"
)

// runTUI runs the screen over stream. Until the TUI lands, watch without
// --no-tui prints the headless JSON lines.
func runTUI(ctx context.Context, stream *consumer.Stream, cfg consumer.Config, g *globalOptions) error {
	_ = ctx
	_ = cfg
	_ = g
	return writeJSONLines(stream, osStdout())
}

func osStdout() *os.File { return os.Stdout }
