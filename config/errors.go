package config

import (
	"errors"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Error is a problem with the configuration file: it cannot be read, is
// not valid TOML, has an unknown key or a bad value. It renders as one
// line, "config FILE:LINE: what", and never contains a secret.
type Error struct {
	Path string
	// Line is the line the problem is on, counting from 1; 0 if unknown.
	Line int
	Msg  string
	// Err is the underlying cause (an OS error), if any.
	Err error
}

// Error renders "config FILE:LINE: MSG".
func (e *Error) Error() string {
	loc := e.Path
	if loc == "" {
		loc = "(no file)"
	}
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	return "config " + loc + ": " + e.Msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// syntaxError turns a toml error into an *Error with the line. A message
// about a line holding a password is replaced, because the toml messages
// quote pieces of the offending value.
func syntaxError(path string, data []byte, err error) *Error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return &Error{Path: path, Msg: "invalid TOML: " + firstLine(err.Error())}
	}
	line := pe.Position.Line
	if line == 0 {
		line = pe.Line
	}
	msg := pe.Message
	last := pe.LastKey
	if i := strings.LastIndexByte(last, '.'); i >= 0 {
		last = last[i+1:]
	}
	if last == "password" || strings.Contains(strings.ToLower(sourceLine(data, line)), "password") {
		msg = "not valid TOML near a password (the text is not shown)"
	}
	return &Error{Path: path, Line: line, Msg: "invalid TOML: " + firstLine(msg)}
}

func sourceLine(data []byte, line int) string {
	if line < 1 {
		return ""
	}
	lines := strings.SplitN(string(data), "\n", line+1)
	if len(lines) < line {
		return ""
	}
	return lines[line-1]
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
