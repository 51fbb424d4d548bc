package embeddings

import (
	"context"
	"sync"
	"time"
)

// Vectors are the tool vectors of one catalog version, filled in the background. A search reads
// them only once every tool has one; until then it ranks lexically.
type Vectors struct {
	e     *Embedder
	texts []string

	mu sync.Mutex
	// owner is the caller whose private catalog this is, "" for a public one (or once a public
	// catalog uses it: Public). Other callers may list the same private catalog: the texts a
	// fill sends count against the share of the caller whose search started it (payer).
	owner string
	// spent is the caller whose share of the budget stopped the last fill, "" if none did.
	spent   string
	vecs    [][]float32
	missing int
	// running is closed when the current fill ends; nil while none runs.
	running chan struct{}
	// asked marks the tools a batch of the current fill asks for.
	asked []bool
	ready chan struct{} // closed once every tool has a vector
	// held is the bytes of the vectors the catalog holds (vectorBytes of each); onAdd, when set,
	// is told of each batch's as it arrives (OnAdd).
	held  int64
	onAdd func(added int64)
}

// vectorBytes is the memory one vector holds: 4 bytes a dimension.
func vectorBytes(vec []float32) int64 { return 4 * int64(len(vec)) }

// OnAdd has f told of the bytes of the vectors each later batch adds to the catalog (from a
// background goroutine, with no lock of the catalog's held), and returns the bytes of those it
// holds already: together, every vector the catalog ever holds is counted once. Whoever bounds
// the memory of what keeps the catalog (an index cache) counts them so: they arrive after the
// catalog is built. f must not call the catalog's methods that wait.
func (v *Vectors) OnAdd(f func(added int64)) (held int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.onAdd = f
	return v.held
}

// Catalog starts embedding one catalog version's tool texts (toolsearch.EmbedText of each tool,
// "" for a tool search never ranks) in the background: those the cache holds are taken from it,
// the others asked for in batches. It returns at once. owner is the caller when the catalog is
// that caller's private one, else "": the vectors it adds to the cache count against that
// caller's share.
func (e *Embedder) Catalog(texts []string, owner string) *Vectors {
	v := &Vectors{e: e, texts: texts, owner: owner, vecs: make([][]float32, len(texts)), ready: make(chan struct{})}
	for i, t := range texts {
		if t == "" {
			continue
		}
		if vec := e.cache.get(digest(t), owner); vec != nil {
			v.vecs[i] = vec
			v.held += vectorBytes(vec)
		} else {
			v.missing++
		}
	}
	if v.missing == 0 {
		close(v.ready)
		return v
	}
	v.start(owner)
	return v
}

// Public marks the catalog as used by a public catalog (every caller's): the texts still to
// embed count against no caller's share, and their vectors are cached as public, as a vector a
// public catalog uses becomes (see cache.use).
func (v *Vectors) Public() {
	v.mu.Lock()
	v.owner = ""
	v.mu.Unlock()
}

// start runs fill, charged to caller while the catalog is private, unless one runs already or
// it is done, and returns a channel closed when the fill that runs ends (closed already when
// none needs to run).
func (v *Vectors) start(caller string) <-chan struct{} {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.running != nil {
		return v.running
	}
	if v.missing == 0 {
		return v.ready
	}
	v.running = make(chan struct{})
	go v.fill(v.running, caller)
	return v.running
}

// fill asks for the missing vectors, in batches, several at once (half of maxConcurrent, so
// queries keep room), until all are there or a request fails or is not admitted (then the next
// search on this version starts it again, once the backoff and the budget allow). While the
// catalog is private its texts count against payer's share: the caller whose search needs them
// now, not whichever caller the catalog was first built for.
func (v *Vectors) fill(done chan struct{}, payer string) {
	defer func() {
		v.mu.Lock()
		v.running = nil
		clear(v.asked)
		v.mu.Unlock()
		close(done)
	}()
	size := v.e.guard.maxBatch(v.e.cfg.BatchSize)
	v.mu.Lock()
	v.spent = ""
	if v.owner != "" {
		size = min(size, textShare(v.e.cfg)) // a larger batch would never be admitted
	}
	v.mu.Unlock()
	var wg sync.WaitGroup
	for range max(1, v.e.cfg.MaxConcurrent/2) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				idx, texts, owner := v.nextBatch(size, payer)
				if len(idx) == 0 {
					return
				}
				vecs, err := v.e.request(v.e.ctx, "tools", owner, texts, v.e.cfg.BatchTimeout)
				if err != nil {
					if reasonOf(err) == ReasonCaller {
						v.mu.Lock()
						v.spent = owner
						v.mu.Unlock()
					}
					return
				}
				v.store(idx, vecs, owner)
			}
		}()
	}
	wg.Wait()
}

// nextBatch is up to size tools still without a vector and not asked for by another batch, now
// marked as asked for, and the caller they are asked for: payer while the catalog is private,
// none once a public catalog uses it.
func (v *Vectors) nextBatch(size int, payer string) (idx []int, texts []string, owner string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.asked == nil {
		v.asked = make([]bool, len(v.texts))
	}
	for i, t := range v.texts {
		if t != "" && v.vecs[i] == nil && !v.asked[i] {
			v.asked[i] = true
			idx, texts = append(idx, i), append(texts, t)
			if len(idx) == size {
				break
			}
		}
	}
	if v.owner == "" {
		return idx, texts, ""
	}
	return idx, texts, payer
}

// store keeps a batch's vectors, asked for owner, in the catalog and in the cache, and tells
// onAdd of them; the last one makes the version ready.
func (v *Vectors) store(idx []int, vecs [][]float32, owner string) {
	var size int64
	for k, i := range idx {
		size = v.e.cache.put(digest(v.texts[i]), vecs[k], owner)
	}
	v.e.obs.CacheBytes(size)
	v.mu.Lock()
	added := int64(0)
	for k, i := range idx {
		if v.vecs[i] == nil {
			v.vecs[i] = vecs[k]
			v.missing--
			added += vectorBytes(vecs[k])
		}
	}
	v.held += added
	last := added > 0 && v.missing == 0
	onAdd := v.onAdd
	v.mu.Unlock()
	if onAdd != nil && added > 0 {
		onAdd(added)
	}
	if last {
		close(v.ready) // after onAdd: a catalog is ready once its vectors are counted
	}
}

// Dense is what a search of caller (its key; its client address's without authentication) fuses: the
// query's vector and the catalog's (by tool), or ok false, and then the search ranks lexically
// at once (the reason is counted). It waits at most Timeout in all: for the tools' vectors while
// they are being asked for (not when their requests have stopped, on a failure or the budget),
// then for the query's. It never fails the search. Over a version with no tool to rank it sends
// no query and counts nothing.
func (e *Embedder) Dense(ctx context.Context, v *Vectors, caller, query string) (q []float32, tools [][]float32, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	if !v.await(ctx, caller) {
		v.mu.Lock()
		reason := ReasonNotReady
		if v.spent == caller && caller != "" {
			reason = ReasonCaller // this caller spent its share on its catalog's texts
		}
		v.mu.Unlock()
		e.obs.Fallback(reason)
		return nil, nil, false
	}
	dims := v.dims()
	if dims == 0 {
		// No tool is ranked (an empty catalog, every backend down): nothing to fuse, so the query
		// is not sent out, and no fallback is counted, the endpoint being in no way at fault.
		return nil, nil, false
	}
	if !e.caller.take(caller, 1, e.now()) {
		e.obs.Fallback(ReasonCaller)
		return nil, nil, false
	}
	q, err := e.Query(ctx, caller, query)
	if err != nil {
		if unsent(err) {
			// Refused before it was sent (the caller's text share, the replica's budget, a
			// back-off): no query of the caller's went out, so none counts against its
			// queries of this minute.
			e.caller.give(caller, 1)
		}
		e.obs.Fallback(reasonOf(err))
		return nil, nil, false
	}
	if len(q) != dims {
		e.obs.Fallback(ReasonDimensions)
		return nil, nil, false
	}
	return q, v.vecs, true
}

// await reports whether every tool has its vector, waiting (until ctx ends) while they are being
// asked for; it starts asking, for caller, when no request runs.
func (v *Vectors) await(ctx context.Context, caller string) bool {
	select {
	case <-v.ready:
		return true
	default:
	}
	select {
	case <-v.ready:
		return true
	case <-v.start(caller):
	case <-ctx.Done():
	}
	select {
	case <-v.ready:
		return true
	default:
		return false
	}
}

// Of is the vectors of the texts, once Wait has returned true.
func (v *Vectors) Of() [][]float32 {
	select {
	case <-v.ready:
		return v.vecs
	default:
		return nil
	}
}

// dims is the length of the catalog's vectors (once ready; 0 if no tool has one).
func (v *Vectors) dims() int {
	for _, vec := range v.vecs {
		if vec != nil {
			return len(vec)
		}
	}
	return 0
}

// Wait blocks until every tool has a vector or ctx ends, for tests and tools that measure.
func (v *Vectors) Wait(ctx context.Context) bool {
	for {
		select {
		case <-v.ready:
			return true
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
			v.mu.Lock()
			owner := v.owner
			v.mu.Unlock()
			v.start(owner)
		}
	}
}
