package kafka

import "testing"

// TestParseBytes: what --max-record-bytes takes, and FormatBytes reads back.
func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"64MiB": 64 << 20, "64 MiB": 64 << 20, "512KiB": 512 << 10, "1GiB": 1 << 30, "4096": 4096, "2048B": 2048,
	} {
		got, err := ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
		if back, err := ParseBytes(FormatBytes(got)); err != nil || back != got {
			t.Errorf("FormatBytes(%d) = %q reads back as %d, %v", got, FormatBytes(got), back, err)
		}
	}
	for _, in := range []string{"", "x", "-1MiB", "2GiB", "1023", "9223372036854775807KiB", "1.5MiB"} {
		if n, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) = %d, want an error", in, n)
		}
	}
}
