//go:build unix

package cli

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used so far, user and
// system: what a benchmark costs whatever else the machine runs.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
