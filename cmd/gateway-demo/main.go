// Command gateway-demo runs a local demo of the MCP gateway: two demo MCP servers, a
// development-only OpenID issuer and the gateway in front of them, all on loopback, and prints
// bearer tokens and a walkthrough to paste into a shell (the README's demo walkthrough is the
// same text). `make demo` runs it. The gateway is configured and served by internal/gateway
// exactly as `gateway serve` does it, defaults included.
//
// `gateway-demo issuer --audience URL` runs only the development token issuer, on a fixed
// loopback address, to try a configuration of one's own with `gateway serve` and test tokens.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcp-gateway/gateway/internal/demo"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/gateway"
	"github.com/mcp-gateway/gateway/internal/loopback"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err := runDemo(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		// The usage was printed, as asked.
	case err != nil:
		fmt.Fprintln(os.Stderr, "gateway-demo:", err)
		os.Exit(1)
	}
}

// The listeners' default addresses, which the README's copy of the walkthrough names.
const (
	defaultMCPAddr   = "127.0.0.1:8080"
	defaultAdminAddr = "127.0.0.1:9090"
)

// demoUsage heads the demo's --help: what it runs, and the issuer sub-command, which a newcomer
// trying a configuration of their own needs and would not find among the flags.
const demoUsage = `usage: gateway-demo [flags]
       gateway-demo issuer --audience URL [flags]

The first runs the demo: two MCP servers, a development-only token issuer and the gateway in
front of them, on loopback, and prints bearer tokens and a walkthrough to paste into bash.
The second runs only the development issuer, to try a configuration of your own with gateway
serve and test tokens ('gateway-demo issuer --help' lists its flags).

flags:
`

// demoFlags are the demo's settings.
type demoFlags struct {
	listen, admin string
	noAuth        bool
}

func parseDemoFlags(args []string, stderr io.Writer) (demoFlags, error) {
	var f demoFlags
	fs := flag.NewFlagSet("gateway-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.listen, "listen", defaultMCPAddr, "MCP listener `address` (loopback only; port 0 picks a free one)")
	fs.StringVar(&f.admin, "admin-listen", defaultAdminAddr, "admin listener `address` (loopback only; port 0 picks a free one)")
	fs.BoolVar(&f.noAuth, "no-auth", false, "run the demo without authentication")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), demoUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if !loopback.Addr(f.listen) || !loopback.Addr(f.admin) {
		return f, errors.New("the demo listens on loopback addresses only")
	}
	return f, nil
}

// runDemo starts the demo backends, a development-only issuer and the gateway in front of
// them, all on loopback, and prints what to try. It runs until interrupted.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "issuer" {
		return devissuer.Command(ctx, args[1:], stdout, stderr)
	}
	f, err := parseDemoFlags(args, stderr)
	if err != nil {
		return err
	}
	// The listeners come first: the gateway's public URL (the tokens' audience) and the
	// approval page's sign-in redirect name the port, which ":0" leaves to the kernel.
	mcpLn, err := listen("MCP listener", "--listen", f.listen)
	if err != nil {
		return err
	}
	defer mcpLn.Close()
	adminLn, err := listen("admin listener", "--admin-listen", f.admin)
	if err != nil {
		return err
	}
	defer adminLn.Close()
	backends, err := demo.Start(ctx, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer backends.Close()
	site, err := newDemoSite(mcpLn.Addr().String(), adminLn.Addr().String(), backends.List(), f.noAuth)
	if err != nil {
		return err
	}
	defer site.close()
	started := make(chan gateway.Listeners, 1)
	errc := make(chan error, 1)
	go func() { errc <- gateway.ServeOn(ctx, site.cfg, mcpLn, adminLn, stderr, started) }()
	select {
	case <-started:
		printDemo(stdout, site.banner())
	case err := <-errc:
		return err
	}
	return <-errc
}

// listen opens the listener what on addr, given by flag; a port in use (another demo, or the
// default ports of something else) is answered with the command line that moves it: the whole
// command, since `make demo`, how most start it, passes no flags on.
func listen(what, flag, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s: %w: another program (another demo?) has it; go run ./cmd/gateway-demo %s 127.0.0.1:0 picks a free port", what, err, flag)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return ln, nil
}
