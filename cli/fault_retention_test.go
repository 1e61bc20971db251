package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// TestRetentionBelowStoredPosition deletes records below a stored position
// (DeleteRecords, as retention does): the next start reports data loss
// naming the partition, the offsets and how many were lost, and continues
// from the log start even under --reset latest (the default); with
// --fail-on-data-loss it writes the event line and exits 1 instead.
func TestRetentionBelowStoredPosition(t *testing.T) {
	kc := testkafka.New(t)
	topic := kc.Topic("retention", 2)
	kc.ProduceN(topic, 0, 100, 30)
	kc.ProduceN(topic, 1, 100, 30)
	store := filepath.Join(t.TempDir(), "o.db")
	b := strings.Join(kc.Brokers, ",")
	watch := func(extra ...string) (string, string, int) {
		args := append([]string{"watch", "--no-tui", "-b", b, "-t", topic, "--store", store, "--until-end"}, extra...)
		return runKbatch(t, args...)
	}
	if _, errOut, code := watch("-o", topic+"=40"); code != 0 {
		t.Fatalf("first run exit %d: %s", code, errOut)
	}
	kc.ProduceN(topic, 1, 50, 30)
	kc.DeleteRecords(topic, 1, 130)

	out, errOut, code := watch("--fail-on-data-loss")
	if code != 1 || !strings.Contains(errOut, topic+"[1]") || !strings.Contains(errOut, "100") || !strings.Contains(errOut, "130") {
		t.Fatalf("--fail-on-data-loss: exit %d, stderr %q; want exit 1 naming %s[1], 100 and 130", code, errOut, topic)
	}
	if !strings.Contains(out, `"code":"data-loss"`) || !strings.Contains(out, `"lost":30`) {
		t.Fatalf("--fail-on-data-loss: stdout %q, want the data-loss event line first", out)
	}

	out, errOut, code = watch()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var loss []jsonLine
	var p1 [2]int64
	for _, l := range parseLines(t, []byte(out)) {
		if l.Type == "event" && l.Code == "data-loss" {
			loss = append(loss, l)
		}
		for _, r := range l.Ranges {
			if r.Partition == 1 {
				if p1[0] == 0 {
					p1[0] = r.From
				}
				p1[1] = r.Until
			}
		}
	}
	if len(loss) != 1 {
		t.Fatalf("data-loss events %+v, want one", loss)
	}
	if !strings.Contains(out, `"expected":100`) || !strings.Contains(out, `"log_start":130`) || !strings.Contains(out, `"lost":30`) {
		t.Fatalf("data-loss event lacks expected 100 / log_start 130 / lost 30:\n%s", out)
	}
	if !strings.Contains(out, `"jump":"data-loss"`) || !strings.Contains(out, `"jumped":true`) {
		t.Fatalf("the batch after the loss is not marked as a jump:\n%s", out)
	}
	if p1 != [2]int64{130, 150} {
		t.Fatalf("partition 1 read %v after the loss, want [130 150]", p1)
	}
}
