package gateway

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// replyLoser is a TCP proxy in front of a real redis-server. Once armed, the first command
// holding word reaches Redis and runs, but its reply never comes back: the connection stays
// silent until the client gives up on it, as when a reply is lost to the network or Redis
// answers only after the client's read timeout.
type replyLoser struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	word   []byte // armed when set
	lost   int    // replies lost so far
}

func startReplyLoser(t *testing.T, target string) *replyLoser {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &replyLoser{ln: ln, target: target}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *replyLoser) addr() string { return p.ln.Addr().String() }

// arm makes the next command holding word lose its reply.
func (p *replyLoser) arm(word string) {
	p.mu.Lock()
	p.word = []byte(word)
	p.mu.Unlock()
}

func (p *replyLoser) replies() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lost
}

func (p *replyLoser) serve(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	var mute sync.Once
	silent := make(chan struct{})
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				p.mu.Lock()
				if p.word != nil && bytes.Contains(bytes.ToLower(buf[:n]), p.word) {
					p.word = nil
					p.lost++
					mute.Do(func() { close(silent) })
				}
				p.mu.Unlock()
				if _, werr := s.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		s.Close()
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(buf)
		select {
		case <-silent:
			continue // the reply is lost; the client's read times out and it closes
		default:
		}
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestConfirmationSurvivesALostRedisReply: the reply to the script that consumes a
// confirmation's answer is lost (Redis ran it; the gateway's read timed out), and go-redis sends
// the script again on a new connection. The answer must still be taken, once: the retry finds
// its own first attempt's record, not another use. Before, the retry found the record and the
// gateway refused the user's answer as a replay, although nothing had acted on it.
func TestConfirmationSurvivesALostRedisReply(t *testing.T) {
	iss := newIssuer(t)
	rs := testredis.Start(t)
	proxy := startReplyLoser(t, rs.Addr())
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Redis.URL = "redis://" + proxy.addr() + "/0"
		c.Redis.ReadTimeout, c.Redis.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "echo-confirm", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
		}
	}, alpha)
	alice := mintFor(t, iss, "alice")
	ask := func() string {
		t.Helper()
		_, r := rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, "")
		if r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
			t.Fatalf("expected a confirmation, got %+v", r)
		}
		return r.Result.RequestState
	}
	// A first answer with every reply delivered loads the scripts, so the armed command below
	// is the consuming script itself, not its load.
	if _, r := rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, approve(ask())); r.Error != nil || r.Result.IsError {
		t.Fatalf("a confirmation with Redis answering: %+v", r)
	}
	state := ask()
	alpha.Reset()
	proxy.arm("evalsha")
	status, r := rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state))
	if proxy.replies() != 1 {
		t.Fatalf("%d replies lost, want the consuming script's one", proxy.replies())
	}
	if status != 200 || r.Error != nil || r.Result.IsError || toolCalls(alpha) != 1 {
		t.Fatalf("the answer whose consuming reply was lost: %d %+v, backend calls %d; want it taken once",
			status, r, toolCalls(alpha))
	}
	if _, r := rawCall(t, gw, alice, "alpha__echo", `{"text":"pay 10"}`, approve(state)); r.Error == nil || toolCalls(alpha) != 1 {
		t.Fatalf("the same answer again: %+v, backend calls %d; want it refused", r, toolCalls(alpha))
	}
}
