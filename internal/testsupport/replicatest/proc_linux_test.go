//go:build linux

package replicatest

import "syscall"

// sysProcAttr kills a child (gateway or haproxy) if the test binary dies without running its
// cleanups, for example on a test timeout panic, so no process outlives the test run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
