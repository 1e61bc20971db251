package testkafka

import "testing"

func TestClusterRoundTrip(t *testing.T) {
	c := New(t)
	topic := c.Topic("tk", 2)
	end := c.ProduceN(topic, 1, 10, 20)
	if end != 10 || c.End(topic, 1) != 10 || c.End(topic, 0) != 0 {
		t.Fatalf("end = %d, hwm p1 %d p0 %d", end, c.End(topic, 1), c.End(topic, 0))
	}
	c.DeleteRecords(topic, 1, 4)
	if got := c.Start(topic, 1); got != 4 {
		t.Fatalf("log start after delete = %d, want 4", got)
	}
	c.AddPartitions(topic, 3)
	if c.End(topic, 2) != 0 {
		t.Fatal("new partition not empty")
	}
}
