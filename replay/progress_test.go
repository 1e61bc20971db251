package replay

import (
	"strings"
	"testing"
	"time"
)

func TestFormatProgress(t *testing.T) {
	for _, tc := range []struct {
		records, covered, total int64
		elapsed                 time.Duration
		want                    string
	}{
		{0, 0, 10000, 0, "[------------]   0%  0/10.0k offsets  0 rec"},
		{4480, 4500, 10000, 2 * time.Second,
			"[#####-------]  45%  4,500/10.0k offsets  4,480 rec  2,240/s  ETA 2.4s"},
		{1234567, 1234567, 1234567, time.Second,
			"[############] 100%  1.2M/1.2M offsets  1.2M rec  1.2M/s"},
		{0, 0, 0, time.Second, "[############] 100%  0/0 offsets  0 rec  0/s"},
		{999_949_999, 999_949_999, 9_999_999_999, 999 * time.Second,
			"[#-----------]   9%  999.9M/10.0G offsets  999.9M rec  1.0M/s  ETA 2h30m"},
		{999_000, 999_000, 999_990, 359_999 * time.Second,
			"[###########-]  99%  999.0k/1.0M offsets  999.0k rec  2/s  ETA 5m57s"},
	} {
		got := formatProgress(tc.records, tc.covered, tc.total, tc.elapsed)
		if got != tc.want {
			t.Errorf("formatProgress(%d, %d, %d, %v)\n got %q\nwant %q", tc.records, tc.covered, tc.total, tc.elapsed, got, tc.want)
		}
		if len(got) >= 80 {
			t.Errorf("progress line %q is %d columns, want fewer than 80", got, len(got))
		}
	}
	var buf strings.Builder
	bar := &progressBar{w: &buf, width: 30, total: 100, start: time.Unix(0, 0)}
	bar.draw(time.Unix(1, 0), 10, 10)
	bar.clear()
	if want := "\r[#-----------]  10%  10/100 o\x1b[K\r\x1b[K"; buf.String() != want {
		t.Errorf("drawn %q, want %q", buf.String(), want)
	}
	for d, want := range map[time.Duration]string{850 * time.Millisecond: "850ms", 12300 * time.Millisecond: "12.3s",
		245 * time.Second: "4m05s", 130 * time.Minute: "2h10m"} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
