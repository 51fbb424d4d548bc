//go:build linux

package testredis

import (
	"syscall"
)

// sysProcAttr kills the server if the test binary dies without running its
// cleanups (for example on a test timeout panic), so no redis-server outlives
// the test run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
