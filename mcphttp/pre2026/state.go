package pre2026

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/legacysession"
	"github.com/mcp-gateway/gateway/internal/outcome"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// What a pre-2026 session sets for its later requests (docs/protocol.md §9.6): its log level
// (logging/setLevel) and its resource subscriptions (resources/subscribe). A session id is
// sealed once at initialize and never re-minted, so this state cannot live in it; no replica
// keeps it either, since the next request of the session may reach any replica. It lives in the
// shared store, in one record per caller (issuer and subject) that holds the state of the
// caller's most recently active sessions, at most maxStateSessions of them and maxStateBytes in
// all: a caller cannot make the gateway keep more, however many sessions it opens. The record
// lives as long as its longest-lived session, and notices tell the other replicas when it
// changes. Its store is never the one that keeps single-use nonces: state no caller can crowd
// confirmations out with.
//
// The record is sealed before it reaches the store (staterecord.go): Redis holds no subscribed
// URI in clear. The notices name a session by its key and a level, never a URI.

// StateStore is the part of the shared store a pre-2026 session's state is kept in (store.Store
// implements it; Redis shares it between replicas).
type StateStore interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Swap seals again, in place, a record the release before sealing wrote in clear.
	Swap(ctx context.Context, key string, old, value []byte) (bool, error)
	// Allow paces a caller's changes (stateChangeRate), across replicas.
	Allow(ctx context.Context, key string, limit store.Limit) (store.RateDecision, error)
}

const (
	// levelCacheTTL bounds how long a replica trusts its copy of a session's level (or of its
	// having none) without asking the store: the staleness a replica that missed a notice may
	// show, and the store round trip a session's calls save.
	levelCacheTTL = 5 * time.Second
	// levelCacheMax bounds the per-replica level cache: at about 300 bytes an entry (its key,
	// its place in two lists), five megabytes, however many sessions call; one caller holds
	// at most a share of it (levelcache.go).
	levelCacheMax = 16384
	// maxSessionSubscriptions bounds the resources one session may subscribe to: every one is
	// part of the session's stored set and of its GET stream's backend listens.
	maxSessionSubscriptions = 100
	// maxStateSessions bounds the sessions of one caller whose state is kept: the least
	// recently changed one's state goes when another needs room.
	maxStateSessions = 16
	// maxStateBytes bounds one caller's record as the sessions' state (its JSON) before it
	// is sealed: a change that would make it larger (with every other session of the
	// caller gone) is refused. Sealed, the record takes at most seal.SealedLen of it in the
	// store (87,471 bytes: a third more in base64, with the nonce, tag and key id). The
	// bound a client meets is the one the release before sealing had, so every record it
	// wrote still fits sealed, and the store's cost per caller stays fixed.
	maxStateBytes = 64 << 10
	// stateTopic is the notices topic on which replicas tell each other of a session's new
	// level or subscription set.
	stateTopic = "legacy-session-state"
	// stateNoticeTimeout bounds publishing a notice, which is best effort.
	stateNoticeTimeout = 2 * time.Second
	// stateStoreTimeout bounds one read of a caller's record, and one change of it (its read
	// and its write together), whatever the store's own timeouts and retries come to: a
	// stalled store answers the client's logging/setLevel or resources/subscribe with an
	// error, and gives its call no log messages, within it.
	stateStoreTimeout = 2 * time.Second
	// restartInterval is the least time between two starts of one GET stream's inner listen.
	// Each start may open the session's backend listen streams anew (on whichever replica
	// holds the stream), so a client that subscribes and unsubscribes in a loop would make
	// that replica reconnect to its backends as fast as it sends; paced, a GET stream
	// reconnects at most once a second, and a caller, which holds at most
	// server.maxListensPerCaller of them on a replica, at most that many times a second.
	// Changes made meanwhile are applied together when the interval has passed.
	restartInterval = time.Second
	// stateChangeRate and stateChangeBurst pace one caller's changes of its sessions'
	// state, across replicas: each reads and writes the caller's whole record (up to
	// seal.SealedLen(maxStateBytes) sealed) and tells every replica, so a caller that
	// alternates its level or a subscription in a loop would otherwise make the store move
	// that much per request, as fast as its in-flight slots allow. A client sets its level and
	// subscribes when it starts, and now and then after: 200 changes back to back (every
	// subscription of two sessions) and 20 a second after that. A change that repeats what
	// the record holds writes nothing and is not counted.
	stateChangeRate  = 20
	stateChangeBurst = 200
	// recheckInterval is how often a GET stream reads its session's subscriptions again,
	// starting its inner listen again only when they changed: notices are best effort (Redis
	// pub/sub reaches whoever is subscribed at that instant, and a subscription made again
	// after a dropped connection misses what was sent meanwhile), so a replica that missed a
	// change's notice applies it within this all the same, for one read of the caller's
	// record per GET stream per interval.
	recheckInterval = 30 * time.Second
)

// stateKeyPrefix starts a caller's record key, stateRateKeyPrefix the key of its changes'
// pace; the store hashes every key, so the caller never appears in clear.
const (
	stateKeyPrefix     = "legacy:state:"
	stateRateKeyPrefix = "legacy:state-changes:"
)

// tooFastError refuses a change past the caller's pace (stateChangeRate): the client may send
// it again after retryAfter.
type tooFastError struct{ retryAfter time.Duration }

// tooFastMessage is what a client is told of a change past its pace.
const tooFastMessage = "Too many changes of this caller's log levels and subscriptions; send this one again shortly"

func (e *tooFastError) Error() string {
	return fmt.Sprintf("pre2026: a caller may change its sessions' log levels and subscriptions %d times a second (%d back to back)",
		stateChangeRate, stateChangeBurst)
}

// errStateStore is the shared store failing a read or a write of a caller's record, or its
// pace, within storeTimeout: the client is answered 503 with Retry-After (stateUnavailable), as
// a 2026-07-28 client is when the store cannot carry its request.
var errStateStore = errors.New("pre2026: the shared store is unavailable")

// errStateBound refuses a change beyond what one caller's record may hold.
var errStateBound = fmt.Errorf("the state of this caller's sessions may take at most %d bytes", maxStateBytes)

// callerState is a caller's record: its sessions' state, the most recently changed last.
type callerState struct {
	Sessions []sessionEntry `json:"s"`
	// Gen names the record from its first write over none (an absent key, or a record that
	// does not open) on: a store that forgot the record (Redis restarted without its data)
	// gets one under another name, and a GET stream that read its set under the old one knows
	// the set it listens to is the one the store forgot (heldSet).
	Gen string `json:"g,omitempty"`
}

// sessionEntry is one session's state.
type sessionEntry struct {
	Key     string   `json:"k"`           // the session's Key()
	Expires int64    `json:"e"`           // when the session expires, Unix seconds
	Level   string   `json:"l,omitempty"` // its logging/setLevel level
	URIs    []string `json:"u,omitempty"` // its subscriptions, namespaced, in normal form
	// As is how the client wrote each subscription whose spelling is not its normal form
	// (percent-encoded non-ASCII, say), by normal form: its updates are relayed under it.
	As map[string]string `json:"a,omitempty"`
	// Fresh is an entry made anew (the session had none in the record): what the session
	// subscribed to before, in a record the store forgot, is not known here, and Gone lists
	// what it unsubscribed from since, so that a GET stream that still listens to the
	// forgotten set merges it in without what the client has since left (restore). At most
	// maxSessionSubscriptions, the oldest going first.
	Fresh bool     `json:"f,omitempty"`
	Gone  []string `json:"d,omitempty"`
}

// sessionState keeps pre-2026 sessions' levels and subscriptions in the shared store, with a
// bounded per-replica cache of levels and the local GET streams to restart when a session's
// subscriptions change.
type sessionState struct {
	kv      StateStore
	sealer  *seal.Sealer  // purposeSessionState, up to seal.SealedLen(maxStateBytes)
	notices store.Notices // nil with a single replica
	self    string        // this replica's id: its own notices come back to it and are skipped
	log     *slog.Logger
	now     func() time.Time
	// levelTTL is levelCacheTTL (tests make it outlive them, to see notices alone at work).
	levelTTL time.Duration
	// restartEvery is restartInterval (tests make it outlive them, to count restarts).
	restartEvery time.Duration
	// recheckEvery is recheckInterval (tests shorten it).
	recheckEvery time.Duration
	// storeTimeout is stateStoreTimeout (tests shorten it).
	storeTimeout time.Duration
	// after runs f once d has passed unless stop is called first (time.AfterFunc): the paced
	// restart of a GET stream's listen (paced) and its rechecks (recheck) wait on it, on the
	// same clock as now, so that a test with a manual clock fires it when its clock says so
	// rather than after real time.
	after func(d time.Duration, f func()) (stop func() bool)

	// received counts the other replicas' notices applied (tests wait on it for the
	// subscription to be in place).
	received atomic.Int64
	// refusedMu guards when this replica last warned of a stored record that does not open
	// and how many such records it read since without a warning (unopened).
	refusedMu     sync.Mutex
	refusedLogged time.Time
	refusedSince  int

	levels *levelCache // levelcache.go

	mu       sync.Mutex
	watchers map[string]map[*watch]struct{} // the GET streams of this replica, by session key
}

// watch is one GET stream's interest in its session's subscriptions: changed ends its current
// inner listen, which then starts again with the new set.
type watch struct{ changed context.CancelFunc }

// stateNotice is one notice on stateTopic.
type stateNotice struct {
	Replica string `json:"r"`
	Kind    string `json:"k"` // "level" or "subs"
	Session string `json:"s"` // the session's Key()
	Level   string `json:"l,omitempty"`
}

// newSessionState keeps session state in kv (a process-local store of its own when nil: one
// replica), sealed under ring; start listens for the other replicas' notices.
// onEvict counts the level cache's evictions (nil counts nothing).
func newSessionState(kv StateStore, ring *seal.KeyRing, notices store.Notices, log *slog.Logger, now func() time.Time, onEvict func(own bool)) (*sessionState, error) {
	if kv == nil {
		m, err := store.NewMemory(store.MemoryOptions{})
		if err != nil {
			return nil, fmt.Errorf("pre2026: session state: %w", err)
		}
		kv = m
	}
	var id [16]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails
	st := &sessionState{kv: kv, sealer: ring.SealerUpTo(purposeSessionState, seal.SealedLen(maxStateBytes)), notices: notices, self: hex.EncodeToString(id[:]), log: log, now: now,
		levelTTL: levelCacheTTL, restartEvery: restartInterval, recheckEvery: recheckInterval, storeTimeout: stateStoreTimeout, levels: newLevelCache(onEvict), watchers: map[string]map[*watch]struct{}{},
		after: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }}
	return st, nil
}

// start applies the other replicas' notices until ctx ends.
func (st *sessionState) start(ctx context.Context) {
	if st.notices != nil {
		st.notices.Subscribe(ctx, stateTopic, st.receive)
	}
}

// stateKey is the key of caller's record ("" is an anonymous caller's, without authentication).
func stateKey(caller string) string { return stateKeyPrefix + caller }

// load reads caller's record, within storeTimeout; an absent one is empty, and so is one that
// does not open (loadWithin). A record the release before sealing wrote in clear is sealed again
// in place once read.
func (st *sessionState) load(ctx context.Context, caller string) (*callerState, error) {
	cs, err := st.read(ctx, caller)
	if errors.Is(err, errUnopened) {
		return cs, nil
	}
	return cs, err
}

// read is load, with errUnopened (and an empty record) for a record that does not open.
func (st *sessionState) read(ctx context.Context, caller string) (*callerState, error) {
	ctx, cancel := context.WithTimeout(ctx, st.storeTimeout)
	defer cancel()
	cs, clear, err := st.loadWithin(ctx, caller)
	if clear != nil {
		st.reseal(ctx, caller, clear, cs)
	}
	return cs, err
}

// errUnopened is a stored record that does not open: what it holds is not known here.
var errUnopened = errors.New("pre2026: the caller's stored session record does not open")

// loadWithin is load within ctx's own deadline, without sealing again: clear is the stored
// value when it is a record in clear. A record that does not open (sealed under a key this
// replica no longer or not yet holds, altered, not a record) is errUnopened with an empty
// record, which load and update take as no state at all: a session's level and subscriptions
// are an aid the client sets again, never a reason to fail its calls, and the next change of
// the caller's state writes a record that opens. A GET stream's recheck takes it as a store it
// cannot read: it keeps the set it has rather than drop it for one it does not know.
func (st *sessionState) loadWithin(ctx context.Context, caller string) (cs *callerState, clear []byte, err error) {
	v, found, err := st.kv.Get(ctx, stateKey(caller))
	if err != nil || !found {
		return &callerState{}, nil, err
	}
	cs, isClear, err := st.decode(v)
	if err != nil {
		st.unopened(ctx, v, err)
		return &callerState{}, nil, errUnopened
	}
	if isClear {
		clear = v
	}
	return cs, clear, nil
}

// entry is sess's state in cs, nil when it has none.
func (cs *callerState) entry(sess *legacysession.Session) *sessionEntry {
	key := sess.Key()
	for i := range cs.Sessions {
		if cs.Sessions[i].Key == key {
			return &cs.Sessions[i]
		}
	}
	return nil
}

// update changes sess's state in caller's record with change and writes the record back: the
// session becomes the most recently changed, expired sessions go, and the least recently changed
// ones go while there are more than maxStateSessions or the record is over maxStateBytes. A
// change that does not fit even alone is refused (errStateBound), and one past the caller's pace
// (tooFastError). changed false leaves the store as it is and is not paced. verify, when set,
// runs once a change is known and paced, before it is written: a check that costs (a backend
// read) is spent neither on a repeat nor past the pace; its error leaves the store as it is.
// The record is read, changed and written back: two changes of one caller racing
// on two replicas may lose one (last writer wins); a client waits for each answer before its next
// request, so one client's changes do not race.
func (st *sessionState) update(ctx context.Context, sess *legacysession.Session, caller string,
	change func(e *sessionEntry) (changed bool, err error), verify func() error) error {
	now := st.now()
	if !now.Before(sess.Expires) {
		return nil
	}
	// The read and the write share one bound (a verify between them gets the write its own).
	parent := ctx
	ctx, cancel := context.WithTimeout(parent, st.storeTimeout)
	defer cancel()
	cs, clear, err := st.loadWithin(ctx, caller)
	if err != nil && !errors.Is(err, errUnopened) {
		return fmt.Errorf("%w: reading a session's state: %w", errStateStore, err)
	}
	e := sessionEntry{Key: sess.Key(), Expires: sess.Expires.Unix()}
	if old := cs.entry(sess); old != nil {
		e = *old
	} else {
		e.Fresh = true
	}
	changed, err := change(&e)
	if err != nil || !changed {
		if clear != nil {
			st.reseal(ctx, caller, clear, cs)
		}
		return err
	}
	if err := st.pace(ctx, caller); err != nil {
		return err
	}
	if verify != nil {
		if err := verify(); err != nil {
			return err
		}
		var cancelWrite context.CancelFunc
		ctx, cancelWrite = context.WithTimeout(parent, st.storeTimeout)
		defer cancelWrite()
		now = st.now()
	}
	kept := make([]sessionEntry, 0, len(cs.Sessions)+1)
	for _, o := range cs.Sessions {
		if o.Key != e.Key && now.Unix() < o.Expires {
			kept = append(kept, o)
		}
	}
	kept = append(kept, e)
	for {
		if len(kept) > maxStateSessions {
			kept = kept[1:]
			continue
		}
		gen := cs.Gen
		if gen == "" && len(cs.Sessions) == 0 {
			gen = newGen()
		}
		v, err := st.encode(&callerState{Sessions: kept, Gen: gen})
		if errors.Is(err, errStateBound) && len(kept) > 1 {
			kept = kept[1:]
			continue
		}
		if err != nil {
			return err
		}
		var last int64
		for _, o := range kept {
			last = max(last, o.Expires)
		}
		if err := st.kv.Set(ctx, stateKey(caller), v, time.Unix(last, 0).Sub(now)); err != nil {
			return fmt.Errorf("%w: recording a session's state: %w", errStateStore, err)
		}
		return nil
	}
}

// newGen is a new record's Gen: random, so that no two writes over an absent record share it.
func newGen() string {
	var g [8]byte
	_, _ = rand.Read(g[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(g[:])
}

// stateUnavailable answers a change of a session's state the shared store could not take
// (errStateStore) as the 2026-07-28 edge answers a request the store cannot carry: 503, -32014,
// Retry-After 1; kept as an HTTP status for a pre-2026 client (keepStatus), whose SDK takes it
// as transient and keeps its session. what says what was not done.
func stateUnavailable(what string) *mcphttp.Error {
	return &mcphttp.Error{Status: http.StatusServiceUnavailable, Outcome: outcome.Unavailable,
		Header: http.Header{"Retry-After": {"1"}},
		RPC:    jsonrpc.NewError(jsonrpc.CodeUnavailable, "Session state store unavailable: "+what+"; retry later")}
}

// pace takes one of caller's changes from its pace: a tooFastError past it.
func (st *sessionState) pace(ctx context.Context, caller string) error {
	d, err := st.kv.Allow(ctx, stateRateKeyPrefix+caller,
		store.Limit{Rate: stateChangeRate, Period: time.Second, Burst: stateChangeBurst})
	if err != nil {
		return fmt.Errorf("%w: pacing a caller's session state changes: %w", errStateStore, err)
	}
	if !d.Allowed {
		return &tooFastError{retryAfter: d.RetryAfter}
	}
	return nil
}

// setLevel records the session's level and tells the other replicas. The level the session
// has already writes nothing and tells nobody: a client repeating its logging/setLevel costs
// the store one read, as a resources/subscribe of a URI already subscribed does.
func (st *sessionState) setLevel(ctx context.Context, sess *legacysession.Session, caller, level string) error {
	changed := false
	err := st.update(ctx, sess, caller, func(e *sessionEntry) (bool, error) {
		changed = e.Level != level
		e.Level = level
		return changed, nil
	}, nil)
	if err != nil {
		return err
	}
	key := sess.Key()
	st.cacheLevel(key, caller, level, true)
	if changed {
		st.publish(stateNotice{Kind: "level", Session: key, Level: level})
	}
	return nil
}

// level is the session's level: from this replica's cache when fresh, else from the store. A
// store that cannot answer gives "" (no log messages) without caching it: logging is an aid,
// never a reason to fail a call.
func (st *sessionState) level(ctx context.Context, sess *legacysession.Session, caller string) string {
	if !sessionBound(sess) {
		return ""
	}
	key := sess.Key()
	if level, ok := st.levels.get(key, st.now()); ok {
		return level
	}
	cs, err := st.load(ctx, caller)
	if err != nil {
		st.log.LogAttrs(ctx, slog.LevelWarn, "legacy session log level not readable; the call gets no log messages",
			slog.String("error", err.Error()))
		return ""
	}
	level := ""
	if se := cs.entry(sess); se != nil {
		level = se.Level
	}
	st.cacheLevel(key, caller, level, true)
	return level
}

// cacheLevel stores caller's session's level in the cache; add false only refreshes an entry
// already there.
func (st *sessionState) cacheLevel(key, caller, level string, add bool) {
	st.levels.put(key, caller, level, st.now().Add(st.levelTTL), add)
}

// subscriptions is the session's subscribed URIs (namespaced, in normal form) and, by normal
// form, how the client wrote those it wrote otherwise (sessionEntry.As).
func (st *sessionState) subscriptions(ctx context.Context, sess *legacysession.Session, caller string) ([]string, map[string]string, error) {
	h, err := st.readHeld(ctx, sess, caller)
	if errors.Is(err, errUnopened) {
		return nil, nil, nil
	}
	return h.uris, h.as, err
}

// heldSet is the subscription set a GET stream listens to, and what it read it from: the
// record's Gen, and whether the store had the record at all. The replica holding the stream is
// the one that knows the set when the store forgot it: a record absent after the stream read
// its set from one, or one under another Gen, is a store that lost the set (heldSet.forgot),
// not a client that emptied it, and the stream writes its set back (restore).
type heldSet struct {
	uris  []string
	as    map[string]string
	gen   string
	found bool
}

// forgot reports whether now, read from the store, is a record the store made anew since h was
// read from it, while h holds subscriptions: they are not lost, the stream still has them.
func (h heldSet) forgot(now heldSet) bool {
	return h.found && len(h.uris) > 0 && (!now.found || now.gen != h.gen)
}

// readHeld reads the session's subscriptions as a GET stream holds them, with errUnopened for a
// record that does not open.
func (st *sessionState) readHeld(ctx context.Context, sess *legacysession.Session, caller string) (heldSet, error) {
	cs, err := st.read(ctx, caller)
	if err != nil {
		return heldSet{}, err
	}
	// A record in the store holds a session at least (update never writes one without), or
	// is one the release before Gen wrote, which holds one too.
	h := heldSet{gen: cs.Gen, found: cs.Gen != "" || len(cs.Sessions) > 0}
	if se := cs.entry(sess); se != nil {
		h.uris, h.as = se.URIs, se.As
	}
	return h, nil
}

// restore writes held, the set a GET stream listens to, back to a record the store forgot it
// from (heldSet.forgot), merged with what the session's entry got since (its subscriptions,
// and without what it unsubscribed from, sessionEntry.Gone), as any change of the session's
// state is: paced, and within the caller's bounds (at most maxSessionSubscriptions, those the
// entry has first). It returns the set as the store has it then.
func (st *sessionState) restore(ctx context.Context, sess *legacysession.Session, caller string, held heldSet) (heldSet, error) {
	err := st.update(ctx, sess, caller, func(e *sessionEntry) (bool, error) {
		for _, u := range held.uris {
			if len(e.URIs) >= maxSessionSubscriptions {
				break
			}
			if slices.Contains(e.URIs, u) || slices.Contains(e.Gone, u) {
				continue
			}
			e.URIs = append(e.URIs, u)
			if sp := held.as[u]; sp != "" {
				if e.As == nil {
					e.As = make(map[string]string, 1)
				}
				e.As[u] = sp
			}
		}
		e.Fresh, e.Gone = false, nil
		return true, nil
	}, nil)
	if err != nil {
		return heldSet{}, err
	}
	return st.readHeld(ctx, sess, caller)
}

// errTooManySubscriptions refuses a subscription beyond maxSessionSubscriptions.
var errTooManySubscriptions = fmt.Errorf("a session may subscribe to at most %d resources", maxSessionSubscriptions)

// updateSubscriptions adds uri (namespaced, in normal form), as the client wrote it (spelled),
// to the session's set, or removes it, and tells the replica holding its GET stream.
func (st *sessionState) updateSubscriptions(ctx context.Context, sess *legacysession.Session, caller, uri, spelled string, add bool, verify func() error) error {
	if spelled == uri {
		spelled = ""
	}
	changed := false
	err := st.update(ctx, sess, caller, func(e *sessionEntry) (bool, error) {
		i := slices.Index(e.URIs, uri)
		// An entry made anew records every unsubscribe, even of what it does not hold: the
		// session may hold it in a record the store forgot, which its GET stream writes back.
		gone := !add && e.Fresh && !slices.Contains(e.Gone, uri)
		switch {
		case add && i >= 0 && e.As[uri] == spelled, !add && i < 0 && !gone:
			return false, nil // already so: nothing to write, nobody to tell, no listen to restart
		case add && i < 0 && len(e.URIs) >= maxSessionSubscriptions:
			return false, errTooManySubscriptions
		case add && i < 0:
			e.URIs = append(e.URIs, uri)
		case !add && i >= 0:
			e.URIs = slices.Delete(e.URIs, i, i+1)
		}
		if add {
			e.Gone = slices.DeleteFunc(e.Gone, func(g string) bool { return g == uri })
		} else if gone {
			e.Gone = append(e.Gone, uri)
			if len(e.Gone) > maxSessionSubscriptions {
				e.Gone = e.Gone[1:]
			}
		}
		// A subscription written again otherwise is relayed under its latest spelling.
		delete(e.As, uri)
		if add && spelled != "" {
			if e.As == nil {
				e.As = make(map[string]string, 1)
			}
			e.As[uri] = spelled
		}
		changed = true
		return true, nil
	}, verify)
	if err != nil || !changed {
		return err
	}
	st.subsChanged(sess.Key())
	st.publish(stateNotice{Kind: "subs", Session: sess.Key()})
	return nil
}

// watch registers a GET stream of the session; the returned function unregisters it.
func (st *sessionState) watch(key string, changed context.CancelFunc) func() {
	w := &watch{changed: changed}
	st.mu.Lock()
	ws := st.watchers[key]
	if ws == nil {
		ws = map[*watch]struct{}{}
		st.watchers[key] = ws
	}
	ws[w] = struct{}{}
	st.mu.Unlock()
	return func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		delete(ws, w)
		// A map made for the key since ws emptied holds a watch; only an empty one goes.
		if len(st.watchers[key]) == 0 {
			delete(st.watchers, key)
		}
	}
}

// paced returns what a change of the session's subscriptions does to a GET stream's inner listen
// started at started: restart ends it at once when it has run restartEvery, else once it has;
// however many changes arrive meanwhile, it restarts once, with the set as it is then.
func (st *sessionState) paced(started time.Time, restart context.CancelFunc) context.CancelFunc {
	var once sync.Once
	return func() {
		once.Do(func() {
			if wait := st.restartEvery - st.now().Sub(started); wait > 0 {
				st.after(wait, restart) // a restart of a listen already over does nothing
				return
			}
			restart()
		})
	}
}

// recheck reads the session's subscriptions again every recheckEvery (the first time sooner, at
// random) until stop is called, and calls restart, once, when they are no longer held, which its
// GET stream's listen runs with, or the store forgot them (heldSet.forgot, which the restart
// writes back): a change whose notice this replica missed reaches the stream all the same. A
// store that cannot be read, or a record that does not open here, changes nothing; the next
// recheck reads again.
func (st *sessionState) recheck(ctx context.Context, sess *legacysession.Session, caller string,
	held heldSet, restart func()) (stop func()) {
	var mu sync.Mutex
	stopped := false
	var pending func() bool
	var tick func()
	tick = func() {
		now, err := st.readHeld(ctx, sess, caller)
		if err == nil && (held.forgot(now) || !slices.Equal(now.uris, held.uris) || !maps.Equal(now.as, held.as)) {
			restart()
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			pending = st.after(st.recheckEvery, tick)
		}
	}
	// The first read comes after a share of the interval drawn at random, between half and
	// all of it: the streams a replica's restart or a reload's end made clients open again
	// together would otherwise read their records in the same instant every interval, all of
	// them, and crowd the store's connections for the requests made meanwhile.
	first := st.recheckEvery
	if half := st.recheckEvery / 2; half > 0 {
		first = st.recheckEvery - mrand.N(half)
	}
	mu.Lock()
	pending = st.after(first, tick)
	mu.Unlock()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		pending()
	}
}

// subsChanged restarts this replica's GET streams of the session.
func (st *sessionState) subsChanged(key string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for w := range st.watchers[key] {
		w.changed()
	}
}

// publish tells the other replicas, best effort: one that misses a level notice serves the old
// level until its cache entry expires (levelCacheTTL); one that misses a subscription notice
// keeps its GET stream's old set until the stream's next recheck (recheckInterval) reads the new one.
func (st *sessionState) publish(n stateNotice) {
	if st.notices == nil {
		return
	}
	n.Replica = st.self
	msg, err := json.Marshal(n)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), stateNoticeTimeout)
	defer cancel()
	if err := st.notices.Publish(ctx, stateTopic, msg); err != nil {
		st.log.Warn("could not tell the other replicas of a legacy session's new state",
			"kind", n.Kind, "error", err)
	}
}

// receive applies another replica's notice.
func (st *sessionState) receive(msg []byte) {
	var n stateNotice
	if err := json.Unmarshal(msg, &n); err != nil || n.Replica == "" || n.Session == "" {
		st.log.Warn("ignored a malformed legacy session notice from the shared store", "bytes", len(msg))
		return
	}
	if n.Replica == st.self {
		return // applied locally already
	}
	st.received.Add(1)
	switch n.Kind {
	case "level":
		if jsonrpc.LogLevelKnown(n.Level) {
			st.cacheLevel(n.Session, "", n.Level, false)
		}
	case "subs":
		st.subsChanged(n.Session)
	}
}
