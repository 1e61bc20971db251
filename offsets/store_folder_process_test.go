//go:build unix

package offsets

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// holdEnv, in a child test process, names the folder and stream it holds.
const holdEnv = "KBATCH_TEST_HOLD_STREAM"

// TestFolderStreamHeldByAnotherProcess runs a second process that holds
// the stream "orders" of a folder store (as a watch does) and, while it
// runs, writes "payments" here, is refused "orders" in one line, and
// reads both. In the child it is that second process.
func TestFolderStreamHeldByAnotherProcess(t *testing.T) {
	if v := os.Getenv(holdEnv); v != "" {
		holdStream(v)
		return
	}
	dir := filepath.Join(t.TempDir(), "streams")
	cmd := exec.Command(os.Args[0], "-test.run=^TestFolderStreamHeldByAnotherProcess$")
	cmd.Env = append(os.Environ(), holdEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	must(t, err)
	out, err := cmd.StdoutPipe()
	must(t, err)
	cmd.Stderr = os.Stderr
	must(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("the child said %q, %v", line, err)
	}

	s, err := OpenFolder(dir, "", OpenOptions{Timeout: 100 * time.Millisecond})
	must(t, err)
	mustEnsure(t, s, "payments")
	must(t, s.Plan("payments", testBatch(1, 2, 0)))
	must(t, s.Ack("payments", 1, testNow))
	_, _, err = s.Stream("orders")
	if !errors.Is(err, ErrLocked) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "stream orders is in use by another kbatch process") {
		t.Errorf("reading the stream the other process holds: %v, want ErrLocked in one line", err)
	}
	infos, err := s.Streams()
	must(t, err)
	if len(infos) != 2 || infos[0].Name != "orders" || infos[0].Next[ev(0)] != 10 || infos[1].Next[ev(0)] != 10 {
		t.Errorf("Streams beside the other process = %+v, want orders and payments at 10", infos)
	}
	must(t, s.Close())
	must(t, stdin.Close())
	must(t, cmd.Wait())
}

// holdStream is the child: it writes a batch of "orders" in the folder
// store dir, says "held", and keeps the stream until stdin closes.
func holdStream(dir string) {
	s, err := OpenFolder(dir, "", OpenOptions{})
	if err == nil {
		err = s.EnsureStream("orders", nil, []string{"events"})
	}
	if err == nil {
		err = s.Plan("orders", testBatch(1, 1, 0))
	}
	if err == nil {
		err = s.Ack("orders", 1, testNow)
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("held")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	_ = s.Close()
}
