package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets/spark"
	"github.com/kbatch-dev/kbatch/record"
)

// FuzzOffsetsParseJSON checks that the --from-json parser never panics and
// that what it accepts is a set of real next offsets: partitions and
// offsets at least 0, offsets at most spark.MaxOffset (so no difference
// overflows), -1/-2 only reported as skipped.
func FuzzOffsetsParseJSON(f *testing.F) {
	for _, s := range []string{
		`{"stream":"events","topics":["events"],"next":{"events":{"0":80,"1":120}}}`,
		`{"events":{"0":80,"1":-1,"2":-2}}`, `{"events":{"1":-7}}`, `{"e":{"0":9223372036854775807}}`,
		`{"stream":"s","next":{"e":{"0":-1}}}`, `{"stream":1}`, `[]`, `{"stream":"s"}`, `{"e\u001b[2J":{"0":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		imp, skipped, err := offsetsParseJSON(b)
		if err != nil {
			return
		}
		for p, off := range imp.next {
			if p.Partition < 0 || off < 0 || off > spark.MaxOffset {
				t.Fatalf("accepted %s=%d from %q", p, off, b)
			}
		}
		for _, s := range skipped {
			for _, r := range s {
				if record.UnsafeRune(r) {
					t.Fatalf("skipped name %q holds %U", s, r)
				}
			}
		}
	})
}

// FuzzOneLine checks the stderr line kbatch prints for any error text (a
// broker's message, a host or topic name, a file name): one line, and not a
// rune a terminal would act on.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{
		"scram: server refused: \x1b]0;PWNED\x07\x1b[2J", "dial tcp: lookup evil\u009b2J: no such host",
		"a\r\nb\nc\r", "\u202etxt.exe", "\xff\xfe", "topic \x1b]52;c;aGk=\x07 does not exist", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line := oneLine(errors.New(s))
		if strings.ContainsAny(line, "\n\r") {
			t.Fatalf("oneLine(%q) = %q is not one line", s, line)
		}
		for _, r := range line {
			if record.UnsafeRune(r) {
				t.Fatalf("oneLine(%q) = %q holds %U", s, line, r)
			}
		}
	})
}
