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
// grow the process (docs/design.md §2.6). A catch-up's live heap is about
// its batch in processing and its read-ahead (4 MiB each by default,
// consumer.Config.MaxBatchBytes) as records take memory, plus the answer
// being decoded: 16-20 MiB, so the GC keeps most of its usual headroom
// below this limit, and the binary's pages (28-30 MiB) and the heap stay
// within 64 MiB of RSS (61 MiB on the 3 M catch-up of BENCHMARKS.md). It is a target, not a cap: live data above it is
// never refused.
const memoryLimit = 32 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
