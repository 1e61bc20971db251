// Command kbatch is a terminal UI for Apache Kafka that runs a direct
// consumer and shows the stream batch by batch. This file only builds the
// commands and maps errors to exit codes; the work is in the packages.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
)

// memoryLimit is the soft heap limit kbatch runs with unless GOMEMLIMIT is
// set: the GC works harder rather than let a catch-up over a big topic
// grow the process (DESIGN §2.6). It is a target, not a cap: live data
// above it is never refused.
const memoryLimit = 80 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	root := newRootCommand()
	err := root.Execute()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kbatch: "+oneLine(err))
	}
	os.Exit(exitCode(err))
}
