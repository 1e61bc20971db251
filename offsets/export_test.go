package offsets_test

import (
	"fmt"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
)

func ExampleKcatCommands() {
	next := map[offsets.Partition]int64{{Topic: "events", Partition: 1}: 120, {Topic: "events", Partition: 0}: 80}
	for _, line := range offsets.KcatCommands([]string{"k1:9092", "k2:9092"}, next) {
		fmt.Println(line)
	}
	// Output:
	// kcat -C -b k1:9092,k2:9092 -t events -p 0 -o 80
	// kcat -C -b k1:9092,k2:9092 -t events -p 1 -o 120
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"localhost:9092": "localhost:9092",
		"events.v1_x-2":  "events.v1_x-2",
		"":               "''",
		"a b":            "'a b'",
		"it's":           `'it'\''s'`,
		"$(rm -rf /)":    "'$(rm -rf /)'",
		"x;y":            "'x;y'",
	} {
		if got := offsets.ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
