package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/offsets"
)

func eventCodes(lines []jsonLine) []string {
	var out []string
	for _, l := range lines {
		if l.Type == "event" {
			out = append(out, l.Code)
		}
	}
	return out
}

// watch --commit-group leaves the group at the store's next offsets; a
// group with a live member is not moved and the stream goes on.
func TestWatchCommitGroup(t *testing.T) {
	kc, topic := filledTopic(t, "events", 2, 50, 500, 300)
	store := filepath.Join(t.TempDir(), "offsets.db")
	b := strings.Join(kc.Brokers, ",")
	group := "follow-" + topic

	out, errOut, code := runKbatch(t, "watch", "--no-tui", "-b", b, "-t", topic, "--store", store,
		"-o", topic+":0=50", "-o", topic+"=earliest", "--until-end", "--max-per-partition", "100", "--commit-group", group)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := parseLines(t, []byte(out))
	if codes := strings.Join(eventCodes(lines), " "); !strings.Contains(codes, offsets.CodeGroupCommit) || strings.Contains(codes, offsets.CodeGroupCommitFailed) {
		t.Errorf("events %s, want one group-commit and no failure", codes)
	}
	want := map[offsets.Partition]int64{offsetsTP(topic, 0): 500, offsetsTP(topic, 1): 300}
	offsetsSameNext(t, "group after watch", kc.GroupOffsets(group), want)
	next, _ := offsetsStored(t, store, topic)
	offsetsSameNext(t, "store after watch", next, want)

	live := "live-" + topic
	commitAt(t, kc, live, map[offsets.Partition]int64{offsetsTP(topic, 0): 3})
	kc.LiveMember(live, topic)
	kc.ProduceN(topic, 0, 10, 50)
	out, errOut, code = runKbatch(t, "watch", "--no-tui", "-b", b, "-t", topic, "--store", store, "--until-end", "--commit-group", live)
	if code != 0 {
		t.Fatalf("exit %d with a live group: %s", code, errOut)
	}
	lines = parseLines(t, []byte(out))
	if codes := strings.Join(eventCodes(lines), " "); !strings.Contains(codes, offsets.CodeGroupCommitStopped) {
		t.Errorf("events %s, want group-stopped", codes)
	}
	if end := lines[len(lines)-1]; end.Records != 10 {
		t.Errorf("the stream read %d records, want 10: a live group must not stop it", end.Records)
	}
	offsetsSameNext(t, "live group", kc.GroupOffsets(live), map[offsets.Partition]int64{offsetsTP(topic, 0): 3})
}

// A blank --commit-group is a usage error, as --to-group "" is: never a
// stream that silently commits to no group, nor one named " ".
func TestWatchCommitGroupBlankName(t *testing.T) {
	for _, name := range []string{"", " ", "\t"} {
		for _, mode := range [][]string{{"--no-tui", "--until-end"}, {}} {
			args := append([]string{"watch", "-b", "127.0.0.1:1", "-t", "events", "--store", t.TempDir() + "/s.db", "--commit-group", name}, mode...)
			_, errOut, code := runKbatch(t, args...)
			offsetsWantFail(t, errOut, code, exitUsage, "--commit-group needs a consumer group name")
		}
	}
}
