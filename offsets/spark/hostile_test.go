package spark

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// secretLine looks like what a symlink to /etc/shadow would show.
const secretLine = "root:$6$S3cretSaltHash:19000:0:99999:7:::"

// hostileCheckpoint is a checkpoint with committed batch 1 and an
// offsets/2 that plant replaces.
func hostileCheckpoint(t *testing.T, plant func(path string)) string {
	t.Helper()
	dir := checkpointDir(t, map[string]string{
		"offsets/0": offsetFile(`{"t":{"0":10}}`),
		"offsets/1": offsetFile(`{"t":{"0":20}}`),
		"commits/0": "v1\n{}",
		"commits/1": "v1\n{}",
	})
	plant(filepath.Join(dir, "offsets", "2"))
	return dir
}

// withDeadline runs fn and fails the test when it has not returned within
// a minute: a read that blocks (a FIFO with no writer) must not hang.
func withDeadline(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return within a minute (blocked on a FIFO?)", what)
		return nil
	}
}

// TestCheckpointReadsOnlyItsOwnRegularFiles: a symlink out of the
// checkpoint, a FIFO, a device and an oversized file are refused with an
// error that names the file and never quotes what the file holds.
func TestCheckpointReadsOnlyItsOwnRegularFiles(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(outside, []byte(secretLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		plant func(path string)
		want  string
	}{
		{"symlink out of the checkpoint", func(p string) {
			if err := os.Symlink(outside, p); err != nil {
				t.Fatal(err)
			}
		}, "outside the checkpoint"},
		{"symlink to a device", func(p string) {
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		}, "outside the checkpoint"},
		{"fifo", func(p string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"oversized", func(p string) {
			if err := os.WriteFile(p, []byte("v1\n"+strings.Repeat(secretLine, maxFileSize/len(secretLine)+1)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "larger than"},
		{"garbage", func(p string) {
			if err := os.WriteFile(p, []byte(secretLine+"\n"+secretLine), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "malformed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := hostileCheckpoint(t, tc.plant)
			c := mustOpen(t, dir)
			for what, read := range map[string]func() error{
				"OffsetLog(2)": func() error { _, err := c.OffsetLog(2); return err },
				"CommittedOffsets": func() error {
					_, err := c.CommittedOffsets(-1)
					return err
				},
				"Batch(2)": func() error { _, err := c.Batch(2, -1); return err },
			} {
				err := withDeadline(t, what, read)
				if err == nil {
					t.Fatalf("%s: no error", what)
				}
				msg := err.Error()
				if strings.Contains(msg, "S3cret") || strings.Contains(msg, "root:") {
					t.Errorf("%s: error quotes the file: %s", what, msg)
				}
				if !strings.Contains(msg, filepath.Join("offsets", "2")) || !strings.Contains(msg, tc.want) {
					t.Errorf("%s: error %q, want the file named and %q", what, msg, tc.want)
				}
			}
		})
	}
}

// TestCheckpointFollowsSymlinksInside: a symlink that stays inside the
// checkpoint (some tools lay logs out that way) is read.
func TestCheckpointFollowsSymlinksInside(t *testing.T) {
	dir := hostileCheckpoint(t, func(p string) {
		if err := os.Symlink("1", p); err != nil {
			t.Fatal(err)
		}
	})
	c := mustOpen(t, dir)
	log := mustOffsetLog(t, c, 2)
	if len(log.Sources) != 1 {
		t.Fatalf("sources %+v", log.Sources)
	}
}

// TestOffsetJSONRejectsImpossibleOffsets: offsets below -2 are nothing in
// Kafka, and offsets near int64's maximum overflow every difference taken
// with them (a batch's record count); both are refused, with the partition
// named. -1 and -2 stay legal in offset JSON (option JSON uses them).
func TestOffsetJSONRejectsImpossibleOffsets(t *testing.T) {
	for _, in := range []string{
		`{"events":{"1":-7}}`,
		`{"events":{"0":-3}}`,
		`{"events":{"0":9223372036854775807}}`,
		`{"events":{"0":4611686018427387905}}`,
	} {
		_, err := ParseOffsetJSON([]byte(in))
		if err == nil || !strings.Contains(err.Error(), "events[") {
			t.Errorf("ParseOffsetJSON(%s) = %v, want an error naming the partition", in, err)
		}
	}
	for _, in := range []string{`{"events":{"0":-1,"1":-2,"2":0}}`, `{"events":{"0":4611686018427387904}}`} {
		if _, err := ParseOffsetJSON([]byte(in)); err != nil {
			t.Errorf("ParseOffsetJSON(%s): %v", in, err)
		}
	}
}

// TestOffsetLogRejectsUnresolvedOffsets: Spark's offset logs and initial
// offsets hold resolved offsets; a negative one there (-7, or the -1/-2 of
// option JSON) is a damaged file, refused with its line.
func TestOffsetLogRejectsUnresolvedOffsets(t *testing.T) {
	for _, o := range []string{"-7", "-1", "-2", "9223372036854775807"} {
		_, err := ParseOffsetLog([]byte(offsetFile(`{"events":{"0":5,"1":` + o + `}}`)))
		if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "events[1]") {
			t.Errorf("offset %s: error %v, want one naming line 3 and events:1", o, err)
		}
		_, err = ParseInitialOffsets([]byte(initialFile(`{"events":{"1":` + o + `}}`)))
		if err == nil || !strings.Contains(err.Error(), "events[1]") {
			t.Errorf("initial offset %s: error %v, want one naming events:1", o, err)
		}
	}
}
