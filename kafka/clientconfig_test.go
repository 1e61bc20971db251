package kafka

import (
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestClientConfigReachesTheClient: what ClientConfig says reaches the
// client sarama and the Fetch path are built from: the rack (KIP-392),
// the protocol version (DefaultKafkaVersion for ""), the isolation.
func TestClientConfigReachesTheClient(t *testing.T) {
	for _, tc := range []struct {
		cc        ClientConfig
		version   sarama.KafkaVersion
		fetch     int16
		committed bool
	}{
		{ClientConfig{}, sarama.V2_8_0_0, 12, false},
		{ClientConfig{Rack: "eu-west-1a", Version: "2.3.0", ReadCommitted: true}, sarama.V2_3_0_0, 11, true},
		{ClientConfig{Rack: "b", Version: "0.10.2.0"}, sarama.V0_10_2_0, 3, false},
	} {
		conf := tc.cc.saramaConfig()
		if conf.RackID != tc.cc.Rack {
			t.Errorf("%+v: sarama RackID %q, want %q", tc.cc, conf.RackID, tc.cc.Rack)
		}
		if conf.Version != tc.version {
			t.Errorf("%+v: sarama version %s, want %s", tc.cc, conf.Version, tc.version)
		}
		o := fetchOptionsFor(conf)
		if o.Rack != tc.cc.Rack || o.Version != tc.fetch || o.Committed() != tc.committed {
			t.Errorf("%+v: fetch options %+v, want rack %q, Fetch v%d, committed %v", tc.cc, o, tc.cc.Rack, tc.fetch, tc.committed)
		}
	}
	if DefaultKafkaVersion != sarama.V2_8_0_0.String() {
		t.Errorf("DefaultKafkaVersion %q, want 2.8.0", DefaultKafkaVersion)
	}
}

// TestDialWithTuning: each field of Tuning changes its setting and a zero
// Tuning keeps Dial's.
func TestDialWithTuning(t *testing.T) {
	cc := ClientConfig{}
	base := cc.saramaConfig()
	got := cc.tuned(Tuning{})
	if got.Consumer.MaxWaitTime != base.Consumer.MaxWaitTime || got.Consumer.Fetch.Default != base.Consumer.Fetch.Default ||
		got.Net.ReadTimeout != base.Net.ReadTimeout || got.Metadata.Retry.Max != base.Metadata.Retry.Max {
		t.Errorf("a zero Tuning changed Dial's settings")
	}
	got = cc.tuned(Tuning{MaxWait: 50 * time.Millisecond, FetchBytes: 1 << 10, RequestTimeout: 2 * time.Second, NoMetadataRetry: true})
	if got.Consumer.MaxWaitTime != 50*time.Millisecond || got.Consumer.Fetch.Default != 1<<10 ||
		got.Net.ReadTimeout != 2*time.Second || got.Net.WriteTimeout != 2*time.Second || got.Metadata.Retry.Max != 0 {
		t.Errorf("Tuning not applied: wait %s, fetch %d, timeouts %s/%s, metadata retries %d",
			got.Consumer.MaxWaitTime, got.Consumer.Fetch.Default, got.Net.ReadTimeout, got.Net.WriteTimeout, got.Metadata.Retry.Max)
	}
}

// TestFetchVersionFollowsTheProtocolVersion: the highest Fetch version
// each protocol version allows, at and between the table's steps.
func TestFetchVersionFollowsTheProtocolVersion(t *testing.T) {
	for v, want := range map[string]int16{
		"0.8.2.2": 0, "0.9.0.0": 1, "0.10.0.0": 2, "0.10.1.0": 3, "0.10.2.0": 3, "0.11.0.0": 5,
		"1.0.0": 6, "1.1.0": 7, "2.0.0": 8, "2.1.0": 10, "2.2.0": 10, "2.3.0": 11, "2.6.0": 11,
		"2.7.0": 12, "2.8.0": 12, "3.7.0": 12,
	} {
		pv, err := sarama.ParseKafkaVersion(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := fetchVersion(pv); got != want {
			t.Errorf("protocol %s: Fetch v%d, want v%d", v, got, want)
		}
	}
}
