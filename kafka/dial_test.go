package kafka

import (
	"testing"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// dialCluster dials kc as Dial does for a user who names its brokers
// only, and closes the client when the test ends.
func dialCluster(t *testing.T, kc *testkafka.Cluster) *Client {
	t.Helper()
	c, err := Dial(ClientConfig{Brokers: kc.Brokers})
	return closedAtEnd(t, c, err)
}

// dialWriter dials a Writer to kc and closes it when the test ends.
func dialWriter(t *testing.T, kc *testkafka.Cluster) *Writer {
	t.Helper()
	w, err := DialWriter(ClientConfig{Brokers: kc.Brokers})
	return closedAtEnd(t, w, err)
}

// closedAtEnd fails the test on err, else returns c, to be closed when the
// test ends.
func closedAtEnd[C interface{ Close() error }](t *testing.T, c C, err error) C {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// clusterWith is a test cluster with a topic of prefix name and one
// partition holding n records of 10 bytes.
func clusterWith(t *testing.T, name string, n int) (*testkafka.Cluster, string) {
	t.Helper()
	kc := testkafka.New(t)
	topic := kc.Topic(name, 1)
	kc.ProduceN(topic, 0, n, 10)
	return kc, topic
}
