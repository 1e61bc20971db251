package demo

import (
	"strings"
	"testing"
)

func TestOptionsWithDefaults(t *testing.T) {
	got, err := Options{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if got.Brokers != DefaultBrokers || got.Rate != DefaultRate || got.Backlog != DefaultBacklog {
		t.Fatalf("defaults = %+v", got)
	}
	kept, err := Options{Brokers: 1, Rate: 50, Backlog: 1000}.withDefaults()
	if err != nil || kept.Brokers != 1 || kept.Rate != 50 || kept.Backlog != 1000 {
		t.Fatalf("explicit options changed: %+v, %v", kept, err)
	}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Brokers: -1}, "brokers"},
		{Options{Rate: -5}, "rate"},
		{Options{Backlog: 999}, "backlog 999"},
		{Options{Backlog: -1}, "backlog"},
	} {
		if _, err := tc.o.withDefaults(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want one naming %q", tc.o, err, tc.want)
		}
	}
}
