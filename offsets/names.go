package offsets

import "github.com/kbatch-dev/kbatch/record"

// QuoteName returns a name that came from a store, a file or a broker (a
// stream, a topic, a partition's String) for a message that is escaped
// once where it reaches the terminal (an error, a note): quoted when
// escaping will change it, so the reader sees it was escaped, and
// otherwise as it is. An empty name shows as "". The text inside the
// quotes stays raw: escaping it here too would double its backslashes
// twice.
func QuoteName(s string) string {
	if s == "" || record.String(s) != s {
		return `"` + s + `"`
	}
	return s
}

// SafeName is QuoteName escaped by record.String (docs/design.md §2.7): the form
// for a name printed directly, in output nothing escapes after it (a table
// on stdout, a comment in a generated file). Never put it in an error or a
// note, which are escaped again where they are printed.
func SafeName(s string) string { return record.String(QuoteName(s)) }
