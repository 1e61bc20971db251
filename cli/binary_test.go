package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// binDir holds the kbatch binary the tests run; TestMain makes it and
// removes it with everything in it when the tests are done.
var binDir string

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kbatch-clitest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cli tests:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintln(os.Stderr, "cli tests:", err)
	}
	os.Exit(code)
}

// kbatchBinary is the kbatch command built from the module root, once per
// test binary, on the first call (tests that run none do not pay for the
// build).
func kbatchBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		p := filepath.Join(binDir, "kbatch")
		out, err := exec.Command("go", "build", "-o", p, "..").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		binPath = p
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}
