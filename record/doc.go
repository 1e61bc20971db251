// Package record holds kbatch's record and what every output path of
// kbatch shares about data that did not come from kbatch itself.
//
// [Record] is a Kafka record as kbatch passes it around: the decoder in
// kafka/ produces them, and the stream, replay, sinks and screen take
// them, so that no package above kafka/ depends on the client library.
// [JSONEncoder] and [AppendJSON] write the JSON lines of docs/design.md §4,
// [KcatEncoder] the shape of kcat -J; [File] and [WriteFile] write a named
// file of records (replay --out, the screen's w) complete or not at all,
// 0600, synced; a --sink file is appended by the consumer package.
//
// Its other core is the one terminal-safety rule of docs/design.md §2.7: record
// keys, values and headers, and every string from a broker or a file
// (SCRAM error messages, host and topic names, checkpoint contents, file
// names), go through [EscapeLine], [EscapeText] or [String] before they
// reach a terminal, whether on the screen, on stderr or in an export.
// [UnsafeRune] is the rule itself, for encoders (JSON, shell quoting) that
// escape in their own syntax.
//
// The package is a leaf of the layering (docs/design.md §5): of kbatch's
// packages it may import only the one atomic file writer, and outside the
// standard library it imports only github.com/segmentio/asm/base64 (the
// base64 of binary keys and values in JSON, see appendBase64).
package record
