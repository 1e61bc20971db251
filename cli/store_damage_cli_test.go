package cli

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// storeOfOneWatch runs a watch from the earliest offset over a topic of
// 1017 records on partition 0 and 500 on partition 1, and returns the
// store it leaves (stream "s": events[0] next 1017, acked).
func storeOfOneWatch(t *testing.T) (store, topic string, brokers string) {
	t.Helper()
	kc := testkafka.New(t)
	topic = kc.Topic("storedamage", 2)
	kc.ProduceN(topic, 0, 1017, 10)
	kc.ProduceN(topic, 1, 500, 10)
	brokers = strings.Join(kc.Brokers, ",")
	store = filepath.Join(t.TempDir(), "offsets.db")
	r := execKbatch(t, nil, "watch", "--no-tui", "--until-end", "-b", brokers, "-t", topic, "--store", store, "--name", "s", "--reset", "earliest")
	if r.code != 0 {
		t.Fatalf("the first watch: exit %d: %s", r.code, r.stderr)
	}
	return store, topic, brokers
}

func bigEndian(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

// TestEditedStoreOnTheCommandLine: a stored next offset edited from 1017 to
// 1273 made watch start at 1273 as "stored", with no event, and 256
// records never reached the sink. Now watch and export refuse it in one
// line naming the stream, the partition and both values; show lists it;
// offsets set, the documented way on, stores it anew and watch goes on.
func TestEditedStoreOnTheCommandLine(t *testing.T) {
	store, topic, b := storeOfOneWatch(t)
	raw := readFile(t, store)
	if !bytes.Contains(raw, bigEndian(1017)) {
		t.Fatal("the next offset 1017 is not in the store")
	}
	if err := os.WriteFile(store, bytes.ReplaceAll(raw, bigEndian(1017), bigEndian(1273)), 0o600); err != nil {
		t.Fatal(err)
	}
	watch := []string{"watch", "--no-tui", "--until-end", "-b", b, "-t", topic, "--store", store, "--name", "s"}
	r := execKbatch(t, nil, watch...)
	checkOneLine(t, r, exitFailure, []string{store, `stream "s"`, topic + "[0]", "1273", "1017", "fails its checksum", "kbatch offsets set --name s '" + topic + ":0=OFFSET'"})

	r = execKbatch(t, nil, "offsets", "export", "--store", store, "--name", "s")
	checkOneLine(t, r, exitFailure, []string{topic + "[0]", "1273", "1017"})

	r = execKbatch(t, nil, "offsets", "show", "--store", store)
	if r.code != 0 || !strings.Contains(r.stdout, "fails its checksum: reads 1273; batch") || !strings.Contains(r.stdout, "at 1017") {
		t.Errorf("offsets show: exit %d, stdout:\n%s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	r = execKbatch(t, nil, "offsets", "set", "--store", store, "--name", "s", topic+":0=1017")
	if r.code != 0 {
		t.Fatalf("offsets set: exit %d: %s", r.code, r.stderr)
	}
	if r = execKbatch(t, nil, watch...); r.code != 0 {
		t.Errorf("watch after offsets set: exit %d: %s", r.code, r.stderr)
	}
	r = execKbatch(t, nil, "offsets", "export", "--store", store, "--name", "s")
	if r.code != 0 || !strings.Contains(r.stdout, `"0":1017`) || !strings.Contains(r.stdout, `"1":500`) {
		t.Errorf("export after offsets set: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
}

// TestDamagedMetaPageOnTheCommandLine: with one of bbolt's two meta pages
// zeroed, watch goes on with the other copy (it quoted bbolt's "panic:
// assertion failed" and refused); with both zeroed it refuses in one line
// without a panic's words.
func TestDamagedMetaPageOnTheCommandLine(t *testing.T) {
	store, topic, b := storeOfOneWatch(t)
	raw := readFile(t, store)
	one := filepath.Join(t.TempDir(), "meta0.db")
	b0 := append([]byte(nil), raw...)
	clear(b0[:4096])
	if err := os.WriteFile(one, b0, 0o600); err != nil {
		t.Fatal(err)
	}
	watch := func(store string) []string {
		return []string{"watch", "--no-tui", "--until-end", "-b", b, "-t", topic, "--store", store, "--name", "s"}
	}
	if r := execKbatch(t, nil, watch(one)...); r.code != 0 {
		t.Errorf("watch with meta page 0 zeroed: exit %d: %s", r.code, r.stderr)
	}
	both := filepath.Join(t.TempDir(), "meta01.db")
	clear(b0[:8192])
	if err := os.WriteFile(both, b0, 0o600); err != nil {
		t.Fatal(err)
	}
	checkOneLine(t, execKbatch(t, nil, watch(both)...), exitFailure, []string{both, "damaged"})
	checkOneLine(t, execKbatch(t, nil, "offsets", "show", "--store", both), exitFailure, []string{both, "damaged"})
}

// TestReadOnlyStoreOnTheCommandLine: a store on a read-only file system is
// not called "not a bbolt file or is damaged … move it away" (offsets show
// reads it): watch says it cannot be written and suggests --no-store;
// offsets set says so too; show reads it. It needs to mount a tmpfs.
func TestReadOnlyStoreOnTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8m"); err != nil {
		t.Skip("cannot mount a tmpfs here (offsets.TestOpenErrorOfAReadOnlyFileSystem covers the message):", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	src, topic, b := storeOfOneWatch(t)
	raw := readFile(t, src)
	store := filepath.Join(dir, "offsets.db")
	if err := os.WriteFile(store, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skip("cannot remount the tmpfs read-only:", err)
	}
	r := execKbatch(t, nil, "watch", "--no-tui", "--until-end", "-b", b, "-t", topic, "--store", store, "--name", "s")
	checkOneLine(t, r, exitFailure, []string{store, "cannot be written", "read-only file system", "--no-store"})
	if strings.Contains(r.stderr, "damaged") {
		t.Errorf("a read-only store is called damaged: %s", r.stderr)
	}
	r = execKbatch(t, nil, "offsets", "set", "--store", store, "--name", "s", topic+":0=5")
	checkOneLine(t, r, exitFailure, []string{store, "cannot be written", "--store"})
	if r = execKbatch(t, nil, "offsets", "show", "--store", store); r.code != 0 || !strings.Contains(r.stdout, "1017") {
		t.Errorf("offsets show of the read-only store: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if r = execKbatch(t, nil, "watch", "--no-tui", "--until-end", "-b", b, "-t", topic, "--store", store, "--name", "s", "--no-store"); r.code != 0 {
		t.Errorf("watch --no-store beside the read-only store: exit %d: %s", r.code, r.stderr)
	}
}
