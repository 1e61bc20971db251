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
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
