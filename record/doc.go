// Package record holds what every output path of kbatch shares about data
// that did not come from kbatch itself.
//
// Its core is the one terminal-safety rule of DESIGN §2.7: record keys,
// values and headers, and every string from a broker or a file (SCRAM
// error messages, host and topic names, checkpoint contents, file names),
// go through [EscapeLine], [EscapeText] or [String] before they reach a
// terminal, whether on the screen, on stderr or in an export. [UnsafeRune]
// is the rule itself, for encoders (JSON, shell quoting) that escape in
// their own syntax.
//
// The package is a leaf: it imports only the standard library.
package record
