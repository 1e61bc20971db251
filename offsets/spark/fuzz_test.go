package spark

import (
	"maps"
	"strings"
	"testing"
)

// FuzzParseOffsetLog checks that ParseOffsetLog never panics, and that what
// it accepts is consistent: a known version, positional indexes in v1, void
// lines only for "-", and Kafka set exactly when the line is Kafka offset
// JSON. It is seeded with every Spark-written offset log fixture.
func FuzzParseOffsetLog(f *testing.F) {
	for rel := range fixtureChecks {
		if strings.Contains(rel, "offset") && !strings.HasSuffix(rel, ".bin") {
			f.Add(fixture(f, rel))
		}
	}
	for _, seed := range []string{
		"v1\n\n-", "v2\n{}\n0:{\"t\":{\"0\":1}}\nname:-", "v1\r\n{}\r\n0\r\n", "v3\n{}", "", "v1",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		log, err := ParseOffsetLog(b)
		if err != nil {
			return
		}
		if log.Version < 1 || log.Version > maxOffsetLogVersion {
			t.Fatalf("accepted version %d", log.Version)
		}
		for i, s := range log.Sources {
			if log.Version == 1 && (s.Index != i || s.ID != "") {
				t.Fatalf("v1 source %d has index %d id %q", i, s.Index, s.ID)
			}
			if s.Void != (s.Raw == "-") || (s.Void && s.Kafka != nil) {
				t.Fatalf("source %d: void %v, raw %q, kafka %v", i, s.Void, s.Raw, s.Kafka)
			}
			k, err := ParseOffsetJSON([]byte(s.Raw))
			if (err == nil && !s.Void) != (s.Kafka != nil) || (s.Kafka != nil && !maps.Equal(k, s.Kafka)) {
				t.Fatalf("source %d: Kafka %v disagrees with ParseOffsetJSON(%q) = %v, %v", i, s.Kafka, s.Raw, k, err)
			}
		}
	})
}

// FuzzParseOffsetJSON checks that ParseOffsetJSON never panics and that
// whatever it accepts survives StartingOffsetsJSON unchanged.
func FuzzParseOffsetJSON(f *testing.F) {
	f.Add([]byte(`{"topic1":{"0":456,"1":789},"topic2":{"0":0}}`))
	f.Add([]byte(`{"t":{"2147483647":-9223372036854775808}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := ParseOffsetJSON(b)
		if err != nil {
			return
		}
		back, err := ParseOffsetJSON([]byte(StartingOffsetsJSON(o, nil)))
		if err != nil || !maps.Equal(o, back) {
			t.Fatalf("round trip of %q: %v, %v", b, back, err)
		}
	})
}

// FuzzParseInitialOffsets checks that ParseInitialOffsets never panics.
func FuzzParseInitialOffsets(f *testing.F) {
	f.Add(fixture(f, initial210))
	f.Add(fixture(f, kafka243+"/sources/0/0"))
	f.Add(fixture(f, "kafka-0-10-sql/kafka-source-initial-offset-future-version.bin"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if o, err := ParseInitialOffsets(b); (err == nil) != (o != nil) {
			t.Fatalf("ParseInitialOffsets(%q) = %v, %v", b, o, err)
		}
	})
}
