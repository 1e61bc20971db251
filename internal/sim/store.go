package sim

import (
	"errors"
	"sync"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

// errKilled is what a store whose process was killed answers every write:
// the file holds exactly what the process had written before it died.
var errKilled = errors.New("sim: the process was killed")

// killable wraps a real store. Once killed it refuses every write, and
// the stream's context is cancelled: the process is dead. A crash mode
// armed on it kills at a chosen moment (after a plan, at a seek).
type killable struct {
	st *offsets.Store

	mu       sync.Mutex
	killed   bool
	killedAt time.Time
	armed    string
	onKill   func()
}

func (k *killable) dead() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.killed
}

func (k *killable) arm(mode string) {
	k.mu.Lock()
	k.armed = mode
	k.mu.Unlock()
}

func (k *killable) isArmed(mode string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.armed == mode && !k.killed
}

// kill kills the process now; it is idempotent.
func (k *killable) kill() {
	k.mu.Lock()
	if k.killed {
		k.mu.Unlock()
		return
	}
	k.killed, k.killedAt = true, time.Now()
	f := k.onKill
	k.mu.Unlock()
	if f != nil {
		f()
	}
}

func (k *killable) write(f func() error) error {
	if k.dead() {
		return errKilled
	}
	return f()
}

func (k *killable) Stream(name string) (offsets.StreamInfo, bool, error) { return k.st.Stream(name) }
func (k *killable) Pending(stream string) (*offsets.Batch, error)        { return k.st.Pending(stream) }

func (k *killable) EnsureStreamOn(name, clusterID string, brokers, topics []string, topicIDs map[string]string) error {
	return k.write(func() error { return k.st.EnsureStreamOn(name, clusterID, brokers, topics, topicIDs) })
}

func (k *killable) AddEvents(stream string, es []offsets.Event) error {
	return k.write(func() error { return k.st.AddEvents(stream, es) })
}

func (k *killable) Plan(stream string, b offsets.Batch) error {
	err := k.write(func() error { return k.st.Plan(stream, b) })
	if err == nil && k.isArmed(CrashAfterPlan) {
		k.kill()
	}
	return err
}

func (k *killable) Ack(stream string, id uint64, at time.Time) error {
	return k.write(func() error { return k.st.Ack(stream, id, at) })
}

func (k *killable) AckAndPlan(stream string, id uint64, at time.Time, next offsets.Batch) error {
	err := k.write(func() error { return k.st.AckAndPlan(stream, id, at, next) })
	if err == nil && k.isArmed(CrashAfterPlan) {
		k.kill()
	}
	return err
}

func (k *killable) AddEvent(stream string, e offsets.Event) error {
	return k.write(func() error { return k.st.AddEvent(stream, e) })
}

func (k *killable) SetNext(stream string, next map[offsets.Partition]int64, e offsets.Event) error {
	return k.write(func() error { return k.st.SetNext(stream, next, e) })
}

func (k *killable) SeekAll(stream string, moves []offsets.SeekMove) error {
	if k.isArmed(CrashAtSeek) {
		k.kill()
	}
	return k.write(func() error { return k.st.SeekAll(stream, moves) })
}

func (k *killable) SetStarts(stream string, next map[offsets.Partition]int64, jumps map[offsets.Partition]string, e offsets.Event) error {
	return k.write(func() error { return k.st.SetStarts(stream, next, jumps, e) })
}

func (k *killable) ResetSeeks(stream string, pending *offsets.Batch) error {
	return k.write(func() error { return k.st.ResetSeeks(stream, pending) })
}

func (k *killable) DropPending(stream string, id uint64, e offsets.Event) error {
	return k.write(func() error { return k.st.DropPending(stream, id, e) })
}
