//go:build !linux

package offsets

// dropMapped does nothing here: the pages stay mapped until the kernel
// takes them back.
func dropMapped(addr uintptr, n int64) error { return nil }
