package offsets

import "github.com/kbatch-dev/kbatch/record"

// SafeName returns a name that came from a store, a file or a broker (a
// stream, a topic, a partition's String) ready to print in a message: made
// safe for a terminal by record.String (DESIGN §2.7), and quoted when that
// changed it, so the reader sees it was escaped. An empty name shows as "".
func SafeName(s string) string {
	if safe := record.String(s); safe != s || s == "" {
		return `"` + safe + `"`
	}
	return s
}
