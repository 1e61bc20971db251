// Command kbatch is a terminal UI for Apache Kafka that runs a direct
// consumer and shows the stream batch by batch. This file only builds the
// commands and maps errors to exit codes; the work is in the packages.
package main

import (
	"fmt"
	"os"
)

func main() {
	root := newRootCommand()
	err := root.Execute()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kbatch: "+oneLine(err))
	}
	os.Exit(exitCode(err))
}
