//go:build !unix

package spark

// openFlags: this system has no O_NOFOLLOW or O_NONBLOCK; the Lstat and
// Stat checks around the open still refuse a link or a file that is not
// regular.
const openFlags = 0
