//go:build unix

package offsets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenRefusesSpecialFiles: /dev/null and a named pipe are refused
// named for what they are, not as "empty (0 bytes) ... remove it", and
// are not touched.
func TestOpenRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.db")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	for path, want := range map[string]string{os.DevNull: "is a device, not a regular file", fifo: "is a named pipe (FIFO), not a regular file"} {
		for _, ro := range []bool{true, false} {
			_, err := Open(path, OpenOptions{ReadOnly: ro, Timeout: 100 * time.Millisecond})
			if !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "remove") {
				t.Errorf("open (read-only %v) of %s: %v, want ErrForeign saying it %s", ro, path, err, want)
			}
		}
	}
}
