package offsets

import (
	"errors"
	"testing"
)

// FuzzParseSpec checks that ParseSpec never panics, fails only with a
// *UsageError, and that a parsed spec's String re-parses to the same spec.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{
		"events:0=50", "events=earliest", "events:1=latest", "events:0=-10",
		"events:0=@2026-11-29T10:00:00Z", "events:0=@-15m", "events=@-1h30m",
		"events:0=@2026-11-29T11:00:00.123456789+02:00", "a.b-c_d:2147483647=9223372036854775807",
		"events:x=5", "events:0=-0", ":=", "=", "events:0=@", "ev:0:1=2", "events:0=@+5m",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseSpec(s, testNow)
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("ParseSpec(%q) error %v is not a *UsageError", s, err)
			}
			return
		}
		again, err := ParseSpec(spec.String(), testNow)
		if err != nil {
			t.Fatalf("ParseSpec(%q).String() = %q does not parse: %v", s, spec.String(), err)
		}
		spec.Text, again.Text = "", ""
		if !sameSpec(spec, again) {
			t.Fatalf("round trip of %q via %q\n got %+v\nwant %+v", s, spec.String(), again, spec)
		}
		if spec.Kind == SpecFromEnd && spec.Offset < 1 || spec.Kind == SpecOffset && spec.Offset < 0 {
			t.Fatalf("ParseSpec(%q) gave offset %d for %s", s, spec.Offset, spec.Kind)
		}
		if spec.AllPartitions != (spec.Partition == -1) || spec.Partition < -1 {
			t.Fatalf("ParseSpec(%q) gave partition %d, all=%v", s, spec.Partition, spec.AllPartitions)
		}
	})
}
