package offsets

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
	}{
		{"events:0=50", Spec{Topic: "events", Partition: 0, Kind: SpecOffset, Offset: 50}},
		{"events:12=earliest", Spec{Topic: "events", Partition: 12, Kind: SpecEarliest}},
		{"events:1=LATEST", Spec{Topic: "events", Partition: 1, Kind: SpecLatest}},
		{"events:0=-10", Spec{Topic: "events", Partition: 0, Kind: SpecFromEnd, Offset: 10}},
		{"events=earliest", Spec{Topic: "events", Partition: -1, AllPartitions: true, Kind: SpecEarliest}},
		{"events=-5", Spec{Topic: "events", Partition: -1, AllPartitions: true, Kind: SpecFromEnd, Offset: 5}},
		{"my.topic-name_v2:3=7", Spec{Topic: "my.topic-name_v2", Partition: 3, Kind: SpecOffset, Offset: 7}},
		{"events:0=0", Spec{Topic: "events", Kind: SpecOffset}},
		{"events:007=5", Spec{Topic: "events", Partition: 7, Kind: SpecOffset, Offset: 5}},
		{"  events:0=5\t", Spec{Topic: "events", Kind: SpecOffset, Offset: 5}},
		{"events:2147483647=4611686018427387904",
			Spec{Topic: "events", Partition: 2147483647, Kind: SpecOffset, Offset: 4611686018427387904}},
		{"events:0=@2026-11-29T09:00:00Z",
			Spec{Topic: "events", Kind: SpecTime, Time: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)}},
		{"events:0=@2026-11-29T11:00:00.5+02:00",
			Spec{Topic: "events", Kind: SpecTime, Time: time.Date(2026, 11, 29, 9, 0, 0, 5e8, time.UTC)}},
		{"events:0=@-15m", Spec{Topic: "events", Kind: SpecTime, Time: testNow.Add(-15 * time.Minute)}},
		{"events=@-1h30m", Spec{Topic: "events", Partition: -1, AllPartitions: true, Kind: SpecTime,
			Time: testNow.Add(-90 * time.Minute)}},
		{"events:0=@0s", Spec{Topic: "events", Kind: SpecTime, Time: testNow}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSpec(tt.in, testNow)
			if err != nil {
				t.Fatalf("ParseSpec(%q): %v", tt.in, err)
			}
			tt.want.Text = strings.TrimSpace(tt.in)
			if !sameSpec(got, tt.want) {
				t.Errorf("ParseSpec(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseSpecErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"events:x=5", `invalid offset spec "events:x=5": partition "x" is not a number`},
		{"events:0", `invalid offset spec "events:0": missing "=" (want TOPIC:PARTITION=OFFSET or TOPIC=OFFSET)`},
		{"", `invalid offset spec "": missing "="`},
		{"=5", `invalid offset spec "=5": missing topic`},
		{":0=5", `invalid offset spec ":0=5": missing topic`},
		{"events:=5", `invalid offset spec "events:=5": missing partition after ":"`},
		{"events:-1=5", `partition "-1" is not a number`},
		{"events:+1=5", `partition "+1" is not a number`},
		{"a:b:c=5", `partition "b:c" is not a number`},
		{"events:2147483648=5", `partition "2147483648" is out of range (0..2147483647)`},
		{"events:0=", `missing offset after "="`},
		{"events:0=abc", `offset "abc" is not a number (want an offset, earliest, latest, -N or @TIME)`},
		{"events:0=-0", `offset "-0": N in -N must be at least 1 (use latest for the high watermark)`},
		{"events:0=--5", `offset "--5" is not a number`},
		{"events:0=-", `offset "-" is not a number`},
		{"events:0=+5", `offset "+5" is not a number`},
		{"events:0=5.0", `offset "5.0" is not a number`},
		{"events:0=1_000", `offset "1_000" is not a number`},
		{"events:0=99999999999999999999", `offset "99999999999999999999" is too large`},
		{"events:0=4611686018427387905", `offset "4611686018427387905" is too large: an offset is at most 2^62`},                  // export → import must take it back
		{"events:0=-99999999999999999999", `offset "-99999999999999999999" is too large: N in -N is at most 9223372036854775807`}, // a number, only too large
		{"events:0=-9223372036854775808", `offset "-9223372036854775808" is too large`},
		{"events:0=@-99999999h", `time "-99999999h" is too far back: a duration is at most about 290 years`}, // a duration, only too far back
		{"events:0=@-5hx", `time "-5hx" is neither RFC 3339`},
		{"events:0=@yesterday", `time "yesterday" is neither RFC 3339 (2026-11-29T10:00:00Z) nor a duration like -15m`},
		{"events:0=@", `time "" is neither RFC 3339`},
		{"events:0=@2026-11-29T10:00:00", `time "2026-11-29T10:00:00" is neither RFC 3339`},
		{"events:0=@15m", `time "15m" is in the future; write @-15m for 15m ago`},
		{"events:0=@+1h", `time "+1h" is in the future; write @-1h for 1h ago`},
		{"events:0=@1969-12-31T23:59:59Z", `time "1969-12-31T23:59:59Z" is before 1970-01-01`},
		{"events:0=@-2562047h", `time "-2562047h" is before 1970-01-01`},
		{"ev ents:0=5", `topic "ev ents" is not a legal topic name (only [a-zA-Z0-9._-])`},
		{"ev\x1bents:0=5", "topic \"ev\x1bents\" is not a legal topic name"}, // raw: escaped where printed
		{"..:0=5", `topic ".." is not a legal topic name`},
		{strings.Repeat("t", 250) + ":0=5", `is longer than 249 characters`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseSpec(tt.in, testNow)
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("ParseSpec(%q) = %v, want a *UsageError", tt.in, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseSpec(%q) error\n got %s\nwant it to contain %s", tt.in, err, tt.want)
			}
		})
	}
}

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in      string
		want    Spec
		wantErr string
	}{
		{in: "50", want: Spec{Partition: -1, Kind: SpecOffset, Offset: 50}},
		{in: " earliest ", want: Spec{Partition: -1, Kind: SpecEarliest}},
		{in: "-10", want: Spec{Partition: -1, Kind: SpecFromEnd, Offset: 10}},
		{in: "@-5m", want: Spec{Partition: -1, Kind: SpecTime, Time: testNow.Add(-5 * time.Minute)}},
		{in: "", wantErr: `invalid offset: missing offset after "="`},
		{in: "x", wantErr: `invalid offset: offset "x" is not a number`},
		{in: "events:0=5", wantErr: `invalid offset: offset "events:0=5" is not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTarget(tt.in, testNow)
			if tt.wantErr != "" {
				var ue *UsageError
				if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("ParseTarget(%q) = %v, want a *UsageError starting %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTarget(%q): %v", tt.in, err)
			}
			tt.want.Text = strings.TrimSpace(tt.in)
			if !sameSpec(got, tt.want) {
				t.Errorf("ParseTarget(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
			if s := got.String(); s != strings.TrimSpace(tt.in) && got.Kind != SpecTime {
				t.Errorf("String() = %q, want %q", s, tt.in)
			}
		})
	}
}

func TestSpecString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"events:0=50", "events:0=50"},
		{"events:007=Earliest", "events:7=earliest"},
		{"events=latest", "events=latest"},
		{"events:3=-100", "events:3=-100"},
		{"events:0=@-15m", "events:0=@2026-11-29T09:45:00Z"},
		{"events:0=@2026-11-29T11:00:00.5+02:00", "events:0=@2026-11-29T11:00:00.5+02:00"},
	}
	for _, tt := range tests {
		s, err := ParseSpec(tt.in, testNow)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.String(); got != tt.want {
			t.Errorf("ParseSpec(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSpecMatches(t *testing.T) {
	one := mustSpec(t, "events:1=5")
	all := mustSpec(t, "events=5")
	target, _ := ParseTarget("5", testNow)
	tests := []struct {
		spec Spec
		p    Partition
		want bool
	}{
		{one, Partition{"events", 1}, true},
		{one, Partition{"events", 0}, false},
		{one, Partition{"events.v2", 1}, false},
		{all, Partition{"events", 0}, true},
		{all, Partition{"events", 99}, true},
		{all, Partition{"orders", 0}, false},
		{target, Partition{"", -1}, false},
	}
	for _, tt := range tests {
		if got := tt.spec.Matches(tt.p); got != tt.want {
			t.Errorf("%s.Matches(%s) = %v, want %v", tt.spec, tt.p, got, tt.want)
		}
	}
}

func TestSpecResolve(t *testing.T) {
	b := Bounds{LogStart: 100, HighWatermark: 1000}
	tests := []struct {
		spec       string
		bounds     Bounds
		timeOffset int64
		want       int64
	}{
		{"events:0=50", b, -1, 50}, // below the log start: ResolveStarts reports it
		{"events:0=5000", b, -1, 5000},
		{"events:0=earliest", b, -1, 100},
		{"events:0=latest", b, -1, 1000},
		{"events:0=-10", b, -1, 990},
		{"events:0=-900", b, -1, 100},
		{"events:0=-901", b, -1, 100},
		{"events:0=-9223372036854775807", b, -1, 100},
		{"events:0=-1", Bounds{LogStart: 1000, HighWatermark: 1000}, -1, 1000},
		{"events:0=@-1h", b, 500, 500},
		{"events:0=@-1h", b, -1, 1000},
		{"events:0=@-1h", b, 50, 100},
		{"events:0=@-1h", b, 2000, 1000},
		{"events:0=latest", b, 500, 1000}, // timeOffset ignored
	}
	for _, tt := range tests {
		got := mustSpec(t, tt.spec).Resolve(tt.bounds, tt.timeOffset)
		if got != tt.want {
			t.Errorf("%s.Resolve(%+v, %d) = %d, want %d", tt.spec, tt.bounds, tt.timeOffset, got, tt.want)
		}
	}
}

func TestSpecKindString(t *testing.T) {
	for k, want := range map[SpecKind]string{SpecOffset: "offset", SpecEarliest: "earliest",
		SpecLatest: "latest", SpecFromEnd: "from-end", SpecTime: "time", 9: "SpecKind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("SpecKind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}

func mustSpec(t testing.TB, s string) Spec {
	t.Helper()
	spec, err := ParseSpec(s, testNow)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// sameSpec compares specs field by field, times by instant.
func sameSpec(a, b Spec) bool {
	ta, tb := a.Time, b.Time
	a.Time, b.Time = time.Time{}, time.Time{}
	return a == b && ta.Equal(tb)
}

// TestCheckDistinct: two specs for one partition (or two topic-wide specs
// for one topic) are refused, naming both, never taken last-wins.
func TestCheckDistinct(t *testing.T) {
	for _, c := range []struct {
		specs []string
		err   string
	}{
		{[]string{"t:0=5", "t:1=7", "u:0=1"}, ""},
		{[]string{"t=earliest", "t:3=100"}, ""},
		{[]string{"t=earliest", "u=latest"}, ""},
		{[]string{"t:0=5", "t:0=7"}, `offset specs "t:0=5" and "t:0=7" both set partition t:0: give one`},
		{[]string{"t:0=5", "t:0=earliest"}, `offset specs "t:0=5" and "t:0=earliest" both set partition t:0: give one`},
		{[]string{"t=earliest", "t:1=2", "t=-5"}, `offset specs "t=earliest" and "t=-5" both set every partition of topic t: give one`},
	} {
		err := CheckDistinct(specs(t, c.specs...))
		var ue *UsageError
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v: %v, want no error", c.specs, err)
		case c.err != "" && (err == nil || !errors.As(err, &ue) || err.Error() != c.err):
			t.Errorf("%v: %v, want usage error %q", c.specs, err, c.err)
		}
	}
}
