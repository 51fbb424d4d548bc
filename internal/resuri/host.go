package resuri

import (
	"net/netip"
	"strconv"
	"strings"
)

// The authority's parts as URL parsers read them: RFC 3986 §6.2.3 makes a default port, and an
// empty one, the same URI as none, and a WHATWG URL parser (Node's URL, pydantic's AnyUrl, the
// TypeScript SDK server's look-up) writes a port as its number, leaves empty user information
// out, reads a special scheme's host that ends in a number as an IPv4 address in any of the
// forms inet_aton takes (0x7f.1, 0177.0.0.1, 2130706433: 127.0.0.1), and an IPv6 address in its
// compressed form. Each spelling is put in the one form those readers give it, or refused where
// readers disagree (Go's net/url and resolver take 0x7f.1 for a host name).

// defaultPort is the port a special scheme means without one ("" for others).
func defaultPort(scheme string) string {
	switch scheme {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	case "ftp":
		return "21"
	}
	return ""
}

// normPort returns the port (digits, without its ':') as its number is written, "" for the
// scheme's default port or none.
func normPort(scheme, port string) (string, error) {
	if port == "" {
		return "", nil
	}
	if !allDigits(port) {
		return "", refuse("invalid port")
	}
	port = strings.TrimLeft(port, "0")
	if port == "" {
		port = "0"
	}
	if n, err := strconv.Atoi(port); err != nil || n > 65535 {
		return "", refuse("invalid port")
	}
	if port == defaultPort(scheme) {
		return "", nil
	}
	return port, nil
}

// normUser returns user information (with its '@') without an empty password, and "" when
// nothing is left: "@" and ":@" are none, "u:@" is "u@".
func normUser(user string) string {
	if user == "" {
		return ""
	}
	ui := strings.TrimSuffix(user, "@")
	if name, pass, _ := strings.Cut(ui, ":"); pass == "" {
		ui = name
	}
	if ui == "" {
		return ""
	}
	return ui + "@"
}

// checkIPv4 refuses a host of a scheme WHATWG parsers read hosts of (the special ones and file)
// that ends in a number, as those parsers judge it (a last label of digits, or 0x and hex
// digits), unless it is an IPv4 address in dotted-decimal form: four decimal numbers up to 255,
// none with a leading zero. host is lower-cased.
func checkIPv4(host string) error {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if !allDigits(last) && !isHexNumber(last) {
		return nil
	}
	labels := strings.Split(host, ".")
	if len(labels) != 4 {
		return refuse("an IPv4 address not in dotted-decimal form")
	}
	for _, l := range labels {
		n, err := strconv.Atoi(l)
		if !allDigits(l) || err != nil || n > 255 || (len(l) > 1 && l[0] == '0') {
			return refuse("an IPv4 address not in dotted-decimal form")
		}
	}
	return nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func isHexNumber(s string) bool {
	rest, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// normIPv6 returns an IP literal ("[…]") in its compressed lower-case form (RFC 5952, as WHATWG
// writes it: an IPv4-mapped address in hex, ::ffff:102:304, where Go writes ::ffff:1.2.3.4), or
// refuses one that is not an IPv6 address.
func normIPv6(lit string) (string, error) {
	a, err := netip.ParseAddr(lit[1 : len(lit)-1])
	if err != nil || !a.Is6() || a.Zone() != "" {
		return "", refuse("an IP literal that is not an IPv6 address")
	}
	if a.Is4In6() {
		b := a.As16()
		return "[::ffff:" + strconv.FormatUint(uint64(b[12])<<8|uint64(b[13]), 16) + ":" +
			strconv.FormatUint(uint64(b[14])<<8|uint64(b[15]), 16) + "]", nil
	}
	return "[" + a.String() + "]", nil
}
