package vault

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/store"
)

// ad is the associated data of a record: the version, its key id, owner and backend, so a
// record opens only as the record of that owner and backend.
func ad(kid string, owner Owner, backend string) []byte {
	return []byte("mcp-gateway vault record\x00" + recordVersion + kid + "\x00" + string(owner) + "\x00" + backend)
}

// seal seals t under the newest key that is not open-only: "v1.<kid>.<base64url(nonce|ciphertext|tag)>".
func (v *Vault) seal(owner Owner, t *Token) ([]byte, error) {
	pt, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	k := &v.keys[v.sealing]
	ns := k.aead.NonceSize()
	raw := make([]byte, ns, ns+len(pt)+k.aead.Overhead())
	_, _ = rand.Read(raw)
	raw = k.aead.Seal(raw, raw[:ns], pt, ad(k.id, owner, t.Backend))
	out := make([]byte, 0, len(recordVersion)+len(k.id)+1+base64.RawURLEncoding.EncodedLen(len(raw)))
	out = append(out, recordVersion+k.id+"."...)
	out = base64.RawURLEncoding.AppendEncode(out, raw)
	if len(out) > v.maxRecord {
		return nil, ErrTooLarge
	}
	return out, nil
}

// open opens a record of owner for backend, and checks that it says whose and which it is.
func (v *Vault) open(owner Owner, backend string, rec []byte) (*Entry, error) {
	if len(rec) > v.maxRecord {
		return nil, fmt.Errorf("%w: too large", ErrUnreadable)
	}
	rest, ok := strings.CutPrefix(string(rec), recordVersion)
	kid, body, found := strings.Cut(rest, ".")
	if !ok || !found {
		return nil, fmt.Errorf("%w: malformed", ErrUnreadable)
	}
	i := v.keyIndex(kid)
	if i < 0 {
		return nil, fmt.Errorf("%w: %w", ErrUnreadable, ErrKeyNotHeld)
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(body)
	k := &v.keys[i]
	ns := k.aead.NonceSize()
	if err != nil || len(raw) < ns+k.aead.Overhead() {
		return nil, fmt.Errorf("%w: malformed", ErrUnreadable)
	}
	pt, err := k.aead.Open(nil, raw[:ns], raw[ns:], ad(kid, owner, backend))
	if err != nil {
		return nil, fmt.Errorf("%w: authentication failed", ErrUnreadable)
	}
	e := &Entry{raw: rec, Stale: i != v.sealing}
	if err := json.Unmarshal(pt, &e.Token); err != nil || e.Backend != backend || e.AccessToken == "" {
		return nil, fmt.Errorf("%w: not a token record", ErrUnreadable)
	}
	return e, nil
}

func (v *Vault) keyIndex(kid string) int {
	for i := range v.keys {
		if v.keys[i].id == kid {
			return i
		}
	}
	return -1
}

// Get returns who's record for backend: ErrNotFound when there is none, ErrUnreadable when it
// does not open or is another caller's (the caller removes it with Delete).
func (v *Vault) Get(ctx context.Context, who Caller, backend string) (*Entry, error) {
	owner := who.Owner()
	rec, ok, err := v.recs.GetRecord(ctx, string(owner), backend, v.life())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNotFound
	}
	e, err := v.open(owner, backend, rec)
	if err != nil {
		return &Entry{raw: rec}, err
	}
	if e.Issuer != who.Issuer || e.Subject != who.Subject {
		return &Entry{raw: rec}, fmt.Errorf("%w: another caller's", ErrUnreadable)
	}
	return e, nil
}

// Put stores t as its caller's record for t.Backend, replacing any: ErrFull when the caller
// already holds its budget of records, ErrTooLarge when t does not fit a record.
func (v *Vault) Put(ctx context.Context, t *Token) error {
	owner := Caller{t.Issuer, t.Subject}.Owner()
	rec, err := v.seal(owner, t)
	if err != nil {
		return err
	}
	stored, err := v.recs.PutRecord(ctx, string(owner), t.Backend, rec, v.budget, v.life())
	switch {
	case err != nil:
		return err
	case !stored:
		return ErrFull
	}
	return nil
}

// Add stores t as its caller's record for t.Backend only while the caller holds none there:
// ErrExists when one is there (another connect stored it since the caller looked), else as Put.
func (v *Vault) Add(ctx context.Context, t *Token) error {
	owner := Caller{t.Issuer, t.Subject}.Owner()
	rec, err := v.seal(owner, t)
	if err != nil {
		return err
	}
	stored, err := v.recs.AddRecord(ctx, string(owner), t.Backend, rec, v.budget, v.life())
	switch {
	case errors.Is(err, store.ErrRecordExists):
		return ErrExists
	case err != nil:
		return err
	case !stored:
		return ErrFull
	}
	return nil
}

// Swap replaces the record old was read from with t, only while it is still that record:
// false when it changed or went meanwhile (a disconnect, another replica's refresh).
func (v *Vault) Swap(ctx context.Context, old *Entry, t *Token) (bool, error) {
	owner := Caller{t.Issuer, t.Subject}.Owner()
	rec, err := v.seal(owner, t)
	if err != nil {
		return false, err
	}
	return v.recs.SwapRecord(ctx, string(owner), t.Backend, old.raw, rec, v.life())
}

// Delete removes who's record for backend; with old set, only while it is still the record old
// was read from. removed reports whether a record went.
func (v *Vault) Delete(ctx context.Context, who Caller, backend string, old *Entry) (bool, error) {
	return v.deleteOwned(ctx, who.Owner(), backend, old)
}

func (v *Vault) deleteOwned(ctx context.Context, owner Owner, backend string, old *Entry) (bool, error) {
	var raw []byte
	if old != nil {
		raw = old.raw
	}
	return v.recs.DeleteRecord(ctx, string(owner), backend, raw)
}

// Subject returns who's records that open, by backend; a record that does not open is left
// out (Get reports it).
func (v *Vault) Subject(ctx context.Context, who Caller) (map[string]*Entry, error) {
	owner := who.Owner()
	all, err := v.recs.OwnerRecords(ctx, string(owner), v.life())
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Entry, len(all))
	for backend, rec := range all {
		if e, err := v.open(owner, backend, rec); err == nil && e.Issuer == who.Issuer && e.Subject == who.Subject {
			out[backend] = e
		}
	}
	return out, nil
}

// EachOfBackend removes every caller's record for backend, in batches, and calls fn with each
// removed record that opened (fn revokes its tokens at the authorization server, best effort).
// A record that does not open is removed too. It returns how many records went.
func (v *Vault) EachOfBackend(ctx context.Context, backend string, fn func(e *Entry)) (int, error) {
	n := 0
	err := v.recs.NameOwners(ctx, backend, v.life(), func(owners []string) error {
		for _, o := range owners {
			e, err := v.takeOwned(ctx, Owner(o), backend)
			if err != nil {
				return err
			}
			if e == nil {
				continue
			}
			n++
			if e.AccessToken != "" {
				fn(e)
			}
		}
		return nil
	})
	return n, err
}

// Take removes who's record for backend, whatever it holds when it goes, and returns the record
// removed: nil when there was none, one without tokens when it did not open. Removing first and
// revoking what went after means a refresh landing meanwhile cannot keep a caller connected
// whom a disconnect or an operator removed: its write finds no record (SwapRecord compares).
func (v *Vault) Take(ctx context.Context, who Caller, backend string) (*Entry, error) {
	e, err := v.takeOwned(ctx, who.Owner(), backend)
	if e != nil && (e.Issuer != who.Issuer || e.Subject != who.Subject) {
		e = &Entry{raw: e.raw} // another caller's (it opened under this owner): not revoked
	}
	return e, err
}

// takeTries bounds how often Take reads a record again that changed between its read and its
// removal (each change is a refresh, at most one at a time per record); then the record goes
// whatever it holds.
const takeTries = 8

func (v *Vault) takeOwned(ctx context.Context, owner Owner, backend string) (*Entry, error) {
	var last *Entry
	for range takeTries {
		rec, ok, err := v.recs.GetRecord(ctx, string(owner), backend, v.life())
		if err != nil || !ok {
			return nil, err
		}
		last, err = v.open(owner, backend, rec)
		if err != nil {
			last = &Entry{raw: rec}
		}
		removed, err := v.recs.DeleteRecord(ctx, string(owner), backend, rec)
		if err != nil || removed {
			return last, err
		}
	}
	removed, err := v.recs.DeleteRecord(ctx, string(owner), backend, nil)
	if err != nil || !removed {
		return nil, err
	}
	return last, nil
}

// RemoveRetired removes who's records of backends that are not current (the configuration no
// longer has them), whatever they hold, and returns the backends whose records went. Their
// tokens are not revoked: no configured backend names the server that issued them or the
// gateway's client there.
func (v *Vault) RemoveRetired(ctx context.Context, who Caller, current func(backend string) bool) ([]string, error) {
	owner := string(who.Owner())
	all, err := v.recs.OwnerRecords(ctx, owner, v.life())
	if err != nil {
		return nil, err
	}
	var gone []string
	for backend, rec := range all {
		if current(backend) {
			continue
		}
		removed, err := v.recs.DeleteRecord(ctx, owner, backend, rec)
		if err != nil {
			return gone, err
		}
		if removed {
			gone = append(gone, backend)
		}
	}
	return gone, nil
}

// Count returns how many callers hold a record for backend.
func (v *Vault) Count(ctx context.Context, backend string) (int64, error) {
	return v.recs.CountRecords(ctx, backend, v.life())
}

// Lock takes who's refresh lock for backend for ttl, across replicas: ok is false when another
// replica holds it. release gives it back, unless it ran out and another replica took it since:
// each taking stores a value of its own, and release removes the lock only while it holds that
// value, the comparison and the removal one step (store.Swap): a read then a delete would
// remove a lock another replica took between the two, and two refreshes of one refresh token
// could then run at once (which an authorization server detecting reuse answers by revoking
// the user's grant).
func (v *Vault) Lock(ctx context.Context, who Caller, backend string, ttl time.Duration) (release func(), ok bool, err error) {
	key := lockPrefix + string(who.Owner()) + "\x00" + backend
	mine := []byte(rand.Text())
	stored, _, err := v.locks.SetNX(ctx, key, mine, ttl)
	if err != nil || !stored {
		return nil, false, err
	}
	return func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_, _ = v.locks.Swap(dctx, key, mine, nil)
	}, true, nil
}

// IsUnavailable reports whether err is the shared store failing (retry later), as opposed to the
// vault's own verdicts.
func IsUnavailable(err error) bool {
	return err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrUnreadable) &&
		!errors.Is(err, ErrFull) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrExists)
}
