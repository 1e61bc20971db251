package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// TestSparkCheckpointHostileFiles: a checkpoint whose next offset log is a
// symlink to a secret file outside it, or a FIFO, makes `spark --once` and
// `offsets import --from-spark` fail promptly with one line that names the
// file and quotes nothing of what it holds (execKbatch fails the test when
// a run takes two minutes: a FIFO read would block forever).
func TestSparkCheckpointHostileFiles(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "shadow")
	const secret = "root:$6$S3cretSaltHash:19000:0:99999:7:::"
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	plants := map[string]func(t *testing.T, path string){
		"symlink out": func(t *testing.T, path string) {
			if err := os.Symlink(secretFile, path); err != nil {
				t.Fatal(err)
			}
		},
		"fifo": func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, plant := range plants {
		for _, cmd := range [][]string{
			{"spark", "DIR", "--no-tui", "--once"},
			{"offsets", "import", "--from-spark", "DIR", "--name", "s", "--dry-run"},
		} {
			t.Run(name+" "+cmd[0], func(t *testing.T) {
				c := newSparkCheckpoint(t)
				c.offsets(0, "e", 5)
				c.offsets(1, "e", 9)
				c.commit(0)
				c.commit(1)
				plant(t, filepath.Join(c.dir, "offsets", "2"))
				args := append([]string(nil), cmd...)
				for i := range args {
					if args[i] == "DIR" {
						args[i] = c.dir
					}
				}
				r := execKbatch(t, nil, args...)
				checkOneLine(t, r, exitFailure, []string{filepath.Join("offsets", "2")}, "S3cret", "root:")
				if !strings.Contains(r.stderr, "not a regular file") && !strings.Contains(r.stderr, "outside the checkpoint") {
					t.Errorf("stderr does not say what is wrong with the file: %s", r.stderr)
				}
			})
		}
	}
}

// TestSparkCheckpointImpossibleOffsets: a committed offset of -7 or one
// near int64's maximum is refused with one line naming the partition, not
// shown by --dry-run nor turned into a negative record count by spark.
func TestSparkCheckpointImpossibleOffsets(t *testing.T) {
	for _, off := range []int64{-7, 9223372036854775807} {
		c := newSparkCheckpoint(t)
		c.offsets(0, "events", 5, 5)
		c.offsets(1, "events", 9, off)
		c.commit(0)
		c.commit(1)
		for _, args := range [][]string{
			{"offsets", "import", "--from-spark", c.dir, "--name", "s", "--dry-run"},
			{"spark", c.dir, "--no-tui", "--once"},
		} {
			r := execKbatch(t, nil, args...)
			checkOneLine(t, r, exitFailure, []string{"events[1]", filepath.Join("offsets", "1")})
			if strings.Contains(r.stdout, "-7") || strings.Contains(r.stdout, `"records":-`) {
				t.Errorf("%s: stdout shows the offset: %s", args[0], r.stdout)
			}
		}
	}
}

// TestSparkWatchFIFOAndSIGTERM: the live `spark DIR --no-tui` meets a FIFO
// where the next offset log should be; it reports the file and keeps
// polling, and SIGTERM ends it (a blocking read ignored SIGTERM for 842 s).
// At start the same FIFO is an error (TestSparkCheckpointHostileFiles).
func TestSparkWatchFIFOAndSIGTERM(t *testing.T) {
	c := newSparkCheckpoint(t)
	c.offsets(0, "e", 5)
	c.commit(0)
	home := t.TempDir()
	cmd := exec.Command(kbatchBinary(t), "spark", c.dir, "--no-tui", "--interval", "100ms")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_STATE_HOME=" + filepath.Join(home, "state")}
	var out testkafka.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	}()
	deadline := time.After(time.Minute)
	waitForOutput(t, &out, `"type":"start"`, deadline, done, "start line")
	// The query moves on: its next offset log is a FIFO.
	if err := syscall.Mkfifo(filepath.Join(c.dir, "offsets", "1"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.commit(1)
	waitForOutput(t, &out, filepath.Join("offsets", "1")+": a named pipe (FIFO), not a regular file", deadline, done, "event about the FIFO")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("spark did not end within a minute of SIGTERM:\n%s", out.String())
	}
}
