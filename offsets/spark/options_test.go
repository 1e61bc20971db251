package spark

import (
	"maps"
	"testing"
)

func TestStartingOffsetsJSON(t *testing.T) {
	for _, tc := range []struct {
		name       string
		next       Offsets
		partitions map[string]int32
		want       string
	}{
		{"FORMAT.md export example", offs(topic243, 2, 3, 4, 3, 1, 3, 3, 3, 0, 3), map[string]int32{topic243: 5},
			`{"spark-test-topic-2b8619f5-d3c4-4c2d-b5d1-8d9d9458aa62":{"0":3,"1":3,"2":3,"3":3,"4":3}}`},
		{"partitions added since the checkpoint get -2", offs("t", 0, 7, 1, 8), map[string]int32{"t": 4},
			`{"t":{"0":7,"1":8,"2":-2,"3":-2}}`},
		{"a topic the checkpoint lacks gets -2", offs("b", 0, 1), map[string]int32{"a": 2, "b": 1},
			`{"a":{"0":-2,"1":-2},"b":{"0":1}}`},
		{"nil partitions keeps next, sorted numerically", offs("t", 10, 1, 9, 2, 0, 3), nil,
			`{"t":{"0":3,"9":2,"10":1}}`},
		{"partitions beyond the count are kept", offs("t", 5, 1), map[string]int32{"t": 1},
			`{"t":{"0":-2,"5":1}}`},
		{"empty", nil, map[string]int32{"gone": 0}, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StartingOffsetsJSON(tc.next, tc.partitions); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestEndingOffsetsJSON(t *testing.T) {
	got := EndingOffsetsJSON(offs("t", 1, 100), map[string]int32{"t": 3})
	if want := `{"t":{"0":-1,"1":100,"2":-1}}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestStartingOffsetsJSONRoundTrip(t *testing.T) {
	next := merge(offs("events", 0, 42, 2, 9007199254740993), offs("audit", 0, 0))
	partitions := map[string]int32{"events": 4, "audit": 1, "new-topic": 2}
	got, err := ParseOffsetJSON([]byte(StartingOffsetsJSON(next, partitions)))
	if err != nil {
		t.Fatal(err)
	}
	want := maps.Clone(next)
	maps.Copy(want, offs("events", 1, OffsetEarliest, 3, OffsetEarliest))
	maps.Copy(want, offs("new-topic", 0, OffsetEarliest, 1, OffsetEarliest))
	sameOffsets(t, "round trip", got, want)
}

func TestStartingOffsetsJSONFromFixture(t *testing.T) {
	c := openFixture(t, kafka243)
	pos := mustCommitted(t, c, -1)
	got, err := ParseOffsetJSON([]byte(StartingOffsetsJSON(pos.Offsets, map[string]int32{topic243: 7})))
	if err != nil {
		t.Fatal(err)
	}
	sameOffsets(t, "exported", got, offs(topic243, 0, 3, 1, 3, 2, 3, 3, 3, 4, 3, 5, -2, 6, -2))
}
