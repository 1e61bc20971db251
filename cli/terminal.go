package cli

// checkTerminal refuses to draw the screen on TERM=dumb: such a terminal
// (Emacs' shell, some CI consoles) cannot move the cursor, so the screen
// would come out as a stream of unreadable frames. Headless output works
// there, and the message says so.
func checkTerminal(g *globalOptions) error {
	if g.getenv != nil && g.getenv("TERM") == "dumb" {
		return usagef("TERM=dumb cannot draw the screen (no cursor movement): add --no-tui for JSON lines, or run in a terminal that can (e.g. TERM=xterm-256color)")
	}
	return nil
}
