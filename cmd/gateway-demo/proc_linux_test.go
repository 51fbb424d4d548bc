//go:build linux

package main

import "syscall"

// demoProcAttr has the kernel kill the demo if the test binary dies without running its
// cleanups (a test timeout's panic), so no demo outlives the test run.
func demoProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
