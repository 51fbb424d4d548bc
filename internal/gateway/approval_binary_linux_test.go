//go:build linux

package gateway

import "syscall"

// gatewayProcAttr has the kernel kill a gateway process if the test binary dies without
// running its cleanups (a test timeout's panic), so no gateway outlives the test run.
func gatewayProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
