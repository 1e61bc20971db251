//go:build unix

package spark

import "syscall"

// openFlags open a checkpoint file without following a symlink put in
// place after the checks, and without blocking on a FIFO.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOFOLLOW
