// Command kbatch is a terminal UI for Apache Kafka that runs a direct
// consumer and shows the stream batch by batch. The commands are in cli/;
// this file only sets the process up and exits with cli.Main's code.
package main

import (
	"os"
	"runtime/debug"

	"github.com/kbatch-dev/kbatch/cli"
)

// memoryLimit is the soft heap limit kbatch runs with unless GOMEMLIMIT is
// set: the GC works harder rather than let a catch-up over a big topic
// grow the process (docs/design.md §2.6). It is a target, not a cap: live data
// above it is never refused. 64 MiB keeps a catch-up of compressible records
// under 100 MiB of RSS for about a tenth more CPU than 80 MiB (BENCHMARKS.md,
// Peak RSS).
const memoryLimit = 64 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
