package record

import "testing"

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 512: "512 B", 1023: "1023 B", 1024: "1.0 KiB", 27034: "26.4 KiB", 102349: "100 KiB",
		524288: "512 KiB", 1048575: "1024 KiB", 1048576: "1.0 MiB", 3250586: "3.1 MiB", 5 << 30: "5.0 GiB", -2048: "-2.0 KiB",
	} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
