package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"
)

// ErrNotLoopback is returned for a target that is, or resolves to, an address outside
// 127.0.0.0/8 and ::1.
var ErrNotLoopback = errors.New("target is not a loopback address")

// ErrBadTarget is returned for a target URL that cannot be used at all.
var ErrBadTarget = errors.New("bad target URL")

// Resolver looks up a host name; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CheckLoopback parses target as an http URL and fails unless its host is a loopback IP literal
// or a name whose every address is loopback. A name that resolves to a mix is refused too: the
// dialer could pick either.
func CheckLoopback(ctx context.Context, r Resolver, target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadTarget, err)
	}
	if u.Scheme != "http" {
		return fmt.Errorf("%w: scheme must be http, got %q", ErrBadTarget, u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("%w: no host", ErrBadTarget)
	}
	if ip, perr := netip.ParseAddr(host); perr == nil {
		return checkAddr(ip)
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("%w: resolving %q: %v", ErrNotLoopback, host, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("%w: %q has no address", ErrNotLoopback, host)
	}
	for _, a := range addrs {
		if err := checkAddr(a); err != nil {
			return err
		}
	}
	return nil
}

func checkAddr(a netip.Addr) error {
	if !a.Unmap().IsLoopback() {
		return fmt.Errorf("%w: %s", ErrNotLoopback, a)
	}
	return nil
}

// loopbackControl is a net.Dialer Control hook: it refuses to connect anywhere but loopback,
// so a name that re-resolves differently after CheckLoopback still cannot leave the machine.
func loopbackControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotLoopback, err)
	}
	return checkAddr(ap.Addr())
}

// newDialer returns a dialer that only connects to loopback addresses.
func newDialer() *net.Dialer {
	return &net.Dialer{Control: loopbackControl, KeepAlive: -1}
}
