//go:build !linux

package gateway

import "syscall"

// gatewayProcAttr: outside Linux there is no parent-death signal; the test's cleanups stop
// the gateway processes.
func gatewayProcAttr() *syscall.SysProcAttr { return nil }
