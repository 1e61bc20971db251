package config

import (
	"errors"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
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
// can quote pieces of the offending value.
func syntaxError(path string, data []byte, err error) *Error {
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		return &Error{Path: path, Msg: "invalid TOML: " + firstLine(err.Error())}
	}
	line, _ := de.Position()
	msg := strings.TrimPrefix(de.Error(), "toml: ")
	key := de.Key()
	if (len(key) > 0 && key[len(key)-1] == "password") || strings.Contains(strings.ToLower(sourceLine(data, line)), "password") {
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
