package sim

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestOracleTakesTheTransactionOutcomeFromTheLog replays seed 63341410
// (failed once in make sim: "never delivered: p1@365") with the one fault
// that makes it fail every time: the producer is told its transaction on
// p1 committed while the broker aborted it. Every read_committed run is
// then right to end without reading p1 (run 1 within a millisecond: one
// fetch brings the aborted batch and its abort marker past the target);
// the oracle must not expect those records.
func TestOracleTakesTheTransactionOutcomeFromTheLog(t *testing.T) {
	var flipped atomic.Bool
	opt := Options{Dir: t.TempDir(), fake: func(f *kfake.Cluster) {
		f.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
			f.KeepControl()
			if r := req.(*kmsg.EndTxnRequest); r.Commit && flipped.CompareAndSwap(false, true) {
				r.Commit = false // the broker aborts; the client hears success
			}
			return nil, nil, false
		})
	}}
	res := Run(Generate(63341410), opt)
	if !flipped.Load() {
		t.Fatal("no transaction was committed")
	}
	if res.Failed() {
		t.Fatalf("%s", res.Report())
	}
	if log := strings.Join(res.Log, "\n"); !strings.Contains(log, "p1: 852 records of a transaction the producer was told committed are aborted in the log") {
		t.Fatalf("the aborted transaction was not noticed:\n%s", log)
	}
}
