package offsets

import "testing"

func TestComparePartitionsAndNext(t *testing.T) {
	a0, a1, b0 := Partition{Topic: "a", Partition: 0}, Partition{Topic: "a", Partition: 1}, Partition{Topic: "b", Partition: 0}
	for _, c := range []struct {
		p, q Partition
		want int
	}{{a0, a1, -1}, {a1, a0, 1}, {a1, b0, -1}, {b0, a0, 1}, {a1, a1, 0}, {Partition{Topic: "a", Partition: 10}, Partition{Topic: "a", Partition: 9}, 1}} {
		if got := ComparePartitions(c.p, c.q); got != c.want {
			t.Errorf("ComparePartitions(%s, %s) = %d, want %d", c.p, c.q, got, c.want)
		}
		if got := c.p.Less(c.q); got != (c.want < 0) {
			t.Errorf("%s.Less(%s) = %v", c.p, c.q, got)
		}
	}
	// The record at offset 41 is the last one read: the stored position
	// and the range's Until are 42.
	if Next(41) != 42 {
		t.Fatalf("Next(41) = %d", Next(41))
	}
}
