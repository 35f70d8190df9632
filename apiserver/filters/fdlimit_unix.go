//go:build unix

package filters

import "syscall"

// descriptorLimit is the soft RLIMIT_NOFILE, 0 if unknown.
func descriptorLimit() int64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	if rl.Cur > 1<<40 {
		return 1 << 40 // "unlimited"
	}
	return int64(rl.Cur)
}
