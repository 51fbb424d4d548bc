// Command gateway is the MCP gateway: a stateless Streamable HTTP edge server speaking MCP
// 2026-07-28 that authenticates callers, applies per-tool policy and forwards to backend MCP
// servers presented as one namespaced server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
)

// version is stamped at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "gateway:", err)
		}
		code := 1
		var ec interface{ ExitCode() int }
		if errors.As(err, &ec) {
			code = ec.ExitCode()
		}
		os.Exit(code)
	}
}

const usage = `usage: gateway [command] [flags]

commands:
  serve         run the gateway (default)
  check-config  load and validate the configuration, print every problem
  version       print the version
  demo          run a local demo: the gateway in front of two demo backends, on loopback
  pins          write or diff the tool-definition lock file (pins write | pins diff)

Run 'gateway <command> -h' for the command's flags.
`

// run is main without the process: arguments, environment and output are passed in so tests
// can drive every sub-command in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		cfg, err := loadConfig("serve", args, getenv, stderr)
		if err != nil {
			return err
		}
		return serve(ctx, cfg, getenv, stdout, stderr, nil)
	case "check-config":
		cfg, err := loadConfig("check-config", args, getenv, stderr)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "configuration OK: %d upstream(s), MCP on %s%s, admin on %s\n",
			len(cfg.Upstreams), cfg.Server.Listen, cfg.Server.Path, cfg.Admin.Listen)
		fmt.Fprint(stdout, cfg.legacyNote())
		return nil
	case "version":
		fmt.Fprintf(stdout, "mcp-gateway %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	case "demo":
		return runDemo(ctx, args, stdout, stderr)
	case "pins":
		return runPins(ctx, args, getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

// flagValues are the command-line settings; only those given override the file and env.
type flagValues struct {
	config, listen, adminListen, publicURL, logLevel, logFormat string
	upstreams                                                   []string
	noPrefix, noAuth, force                                     bool
}

// loadConfig applies the file, then MCPGW_* variables, then flags, then defaults, and validates
// the result, reporting every problem at once.
func loadConfig(name string, args []string, getenv func(string) string, stderr io.Writer) (*Config, error) {
	var fv flagValues
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&fv.config, "config", "", "YAML configuration `file`")
	fs.StringVar(&fv.listen, "listen", "", "MCP listener `address` (default :8080)")
	fs.StringVar(&fv.adminListen, "admin-listen", "", "admin listener `address` (default 127.0.0.1:9090)")
	fs.StringVar(&fv.publicURL, "public-url", "", "canonical public `URL` of the MCP endpoint")
	fs.StringVar(&fv.logLevel, "log-level", "", "log `level`: debug, info, warn, error")
	fs.StringVar(&fv.logFormat, "log-format", "", "log `format`: json or text")
	fs.Func("upstream", "backend as `NAME=URL` (repeatable)", func(v string) error {
		fv.upstreams = append(fv.upstreams, v)
		return nil
	})
	fs.BoolVar(&fv.noPrefix, "no-prefix", false, "pass a single backend's names through unchanged")
	fs.BoolVar(&fv.noAuth, "no-auth", false, "serve without authentication (development only)")
	fs.BoolVar(&fv.force, "force", false, "allow --no-auth on a non-loopback listener")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if fv.config == "" {
		fv.config = getenv("MCPGW_CONFIG")
	}
	cfg := newConfig()
	if fv.config != "" {
		if err := loadFile(fv.config, &cfg); err != nil {
			return nil, err
		}
	}
	if err := applyEnv(&cfg, getenv); err != nil {
		return nil, err
	}
	if err := fv.apply(&cfg); err != nil {
		return nil, err
	}
	cfg.applyDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("invalid configuration:\n%w", err)
	}
	return &cfg, nil
}

func (fv *flagValues) apply(c *Config) error {
	for _, p := range []struct {
		dst *string
		v   string
	}{
		{&c.Server.Listen, fv.listen}, {&c.Admin.Listen, fv.adminListen},
		{&c.Server.PublicURL, fv.publicURL}, {&c.Log.Level, fv.logLevel}, {&c.Log.Format, fv.logFormat},
	} {
		if p.v != "" {
			*p.dst = p.v
		}
	}
	for _, u := range fv.upstreams {
		if err := addUpstream(c, u); err != nil {
			return err
		}
	}
	c.Namespace.NoPrefix = c.Namespace.NoPrefix || fv.noPrefix
	c.Auth.Disabled = c.Auth.Disabled || fv.noAuth
	c.forceNoAuth = fv.force
	return nil
}
