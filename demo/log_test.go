package demo

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestLogger(t *testing.T) {
	var got []string
	l := newLogger(func(f string, args ...any) { got = append(got, fmt.Sprintf(f, args...)) })

	kgoLogger{l}.Log(kgo.LogLevelWarn, "produce failed", "broker", 1, "err", "boom")
	kfakeLogger{l}.Logf(kfake.LogLevelWarn, "noise %d", 1)
	kfakeLogger{l}.Logf(kfake.LogLevelError, "broken %d", 2)
	l.limited("first %d", 1)
	l.limited("second %d", 2) // within the same second: dropped

	want := []string{
		"demo producer: WARN: produce failed broker=1 err=boom",
		"demo broker: broken 2",
		"first 1",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("logged %q\nwant   %q", got, want)
	}

	silent := newLogger(nil) // a nil Logf discards, without panicking
	silent.printf("x")
	silent.limited("x")
	kgoLogger{silent}.Log(kgo.LogLevelError, "x")
}
