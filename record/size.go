package record

import (
	"fmt"
	"strconv"
)

// FormatSize renders a byte count the one way kbatch shows sizes, on the
// screen and on stderr alike: binary (IEC) units, one decimal below 100
// of a unit: 512 B, 26.4 KiB, 512 KiB, 3.1 MiB.
func FormatSize(n int64) string {
	if n < 0 {
		return "-" + FormatSize(-n)
	}
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	if v >= 99.95 {
		return fmt.Sprintf("%.0f %ciB", v, "KMGTP"[exp])
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTP"[exp])
}
