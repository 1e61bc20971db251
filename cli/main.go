// Package cli is kbatch's command tree: it turns flags, the environment
// and the configuration file into calls on the other packages, and errors
// into one stderr line and an exit code (docs/design.md §3).
package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/kbatch-dev/kbatch/config"
)

// Main runs kbatch with args (the command line without the program name),
// reading stdin and writing stdout and stderr, and returns the process's
// exit code. Errors are reported here, as one line on stderr.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCommandFor(&globalOptions{stderr: stderr, getenv: os.Getenv, prompt: config.PromptPassword, terminal: needTerminal(stdin, stdout)})
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err != nil {
		fmt.Fprintln(stderr, "kbatch: "+oneLine(err))
	}
	return exitCode(err)
}
