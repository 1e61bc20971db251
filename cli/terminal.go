package cli

import (
	"io"
	"os"
	"runtime"

	"golang.org/x/term"
)

// checkTerminal refuses to draw the screen where it cannot be seen or
// used, in one line and before reaching a cluster: on TERM=dumb (Emacs'
// shell, some CI consoles cannot move the cursor, so the screen would
// come out as a stream of unreadable frames), and, through g.terminal,
// without a terminal to draw on or to read keys from. Headless output
// works in all of these, and the message says so.
func checkTerminal(g *globalOptions) error {
	if g.getenv != nil && g.getenv("TERM") == "dumb" {
		return usagef("TERM=dumb cannot draw the screen (no cursor movement): add --no-tui for JSON lines, or run in a terminal that can (e.g. TERM=xterm-256color)")
	}
	if g.terminal != nil {
		return g.terminal()
	}
	return nil
}

// needTerminal is globalOptions.terminal for a process whose standard
// streams are stdin and stdout. The screen is drawn on stdout: redirected
// to a file or a pipe, the screen would show nothing and fill the file
// with escape codes. Keys come from stdin, or from /dev/tty when stdin is
// not a terminal (as bubbletea does); with neither, as under ssh without
// -t, the screen cannot start.
func needTerminal(stdin io.Reader, stdout io.Writer) func() error {
	return func() error {
		if f, ok := stdout.(*os.File); ok && !term.IsTerminal(int(f.Fd())) {
			return usagef("stdout is not a terminal, and the screen is drawn there: add --no-tui for JSON lines (and --sink FILE for the records), or leave stdout on the terminal")
		}
		if f, ok := stdin.(*os.File); ok && !term.IsTerminal(int(f.Fd())) && runtime.GOOS != "windows" {
			tty, err := os.Open("/dev/tty")
			if err != nil {
				return usagef("no terminal to read keys from (stdin is not one, and there is no /dev/tty: ssh without -t?): add --no-tui for JSON lines, or run kbatch in a terminal (ssh -t)")
			}
			_ = tty.Close()
		}
		return nil
	}
}
