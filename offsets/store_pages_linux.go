package offsets

import "golang.org/x/sys/unix"

// dropMapped tells the kernel this process no longer needs the n bytes of
// the file mapping at addr (madvise MADV_DONTNEED: for a shared file
// mapping the pages stay in the page cache and a later read maps them
// again from there).
func dropMapped(addr uintptr, n int64) error {
	if n <= 0 {
		return nil
	}
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, addr, uintptr(n), unix.MADV_DONTNEED)
	if errno != 0 {
		return errno
	}
	return nil
}
