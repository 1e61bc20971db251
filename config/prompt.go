package config

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/term"
)

// ErrNoTerminal means a password prompt was needed but kbatch does not run
// on a terminal (stdin is not one, or there is no /dev/tty).
var ErrNoTerminal = errors.New("no terminal to ask for the password on")

// PromptPassword asks for a password on the controlling terminal
// (/dev/tty) without echo, writing label as the prompt there (not on
// stdout or stderr, which may be redirected). It only prompts when stdin
// is a terminal too, so scripts fail fast with ErrNoTerminal instead of
// waiting for an answer nobody gives.
func PromptPassword(label string) (Secret, error) {
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		return "", ErrNoTerminal
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return "", ErrNoTerminal
	}
	defer tty.Close()
	if !term.IsTerminal(int(tty.Fd())) {
		return "", ErrNoTerminal
	}
	if _, err := fmt.Fprint(tty, label); err != nil {
		return "", ErrNoTerminal
	}
	pw, err := term.ReadPassword(int(tty.Fd()))
	_, _ = fmt.Fprintln(tty)
	if err != nil {
		return "", fmt.Errorf("reading the password from the terminal: %w", err)
	}
	s := strings.TrimRight(string(pw), "\r\n")
	if s == "" {
		return "", errors.New("no password typed")
	}
	return Secret(s), nil
}
