package toolsearch

import "unsafe"

// Estimated bookkeeping of one map entry beyond its key and value: its share of the buckets,
// their control bytes and the table's slack.
const mapEntryOverhead = 32

// Sizes of what the index holds per item, as the compiler lays them out.
const (
	stringHeader  = int64(unsafe.Sizeof(""))
	sliceHeader   = int64(unsafe.Sizeof([]int32(nil)))
	postingBytes  = int64(unsafe.Sizeof(posting{}))
	fieldLenBytes = int64(unsafe.Sizeof([numFields]float32{}))
	actionBytes   = int64(unsafe.Sizeof(action(0)))
	accBytes      = int64(unsafe.Sizeof(acc{}))
)

// Bytes estimates the memory the index keeps: the tools' names, the postings and vocabulary,
// the field lengths, the near-duplicate links, the backends, the tools' word vectors when it has
// them, and one search's buffers (which its pool keeps between searches). Tables shared by every
// index (the word vectors' table, a thesaurus) are not counted. Its cost is linear in the
// number of tools and terms, not in their text: callers compute it once, when the index is
// built.
func (ix *BM25) Bytes() int64 {
	n := int64(unsafe.Sizeof(*ix))
	n += int64(cap(ix.names)) * stringHeader
	for _, s := range ix.names {
		n += int64(len(s))
	}
	for term, ps := range ix.postings {
		n += stringHeader + int64(len(term)) + sliceHeader + mapEntryOverhead + int64(cap(ps))*postingBytes
	}
	n += int64(cap(ix.vocab)) * stringHeader // the terms' bytes are the postings' keys
	n += int64(cap(ix.fieldLen)) * fieldLenBytes
	n += int64(cap(ix.dups)) * sliceHeader
	for _, d := range ix.dups {
		n += int64(cap(d)) * 4
	}
	n += int64(cap(ix.withDups)+cap(ix.backend)) * 4
	for w, ids := range ix.backendWords {
		n += stringHeader + int64(len(w)) + sliceHeader + mapEntryOverhead + int64(cap(ids))*4
	}
	n += int64(cap(ix.actions)) * actionBytes
	if ix.vec != nil {
		n += int64(unsafe.Sizeof(*ix.vec)) + int64(cap(ix.vec.tools)+cap(ix.vec.termVecs))*4 +
			int64(cap(ix.vec.terms))*stringHeader
	}
	n += int64(len(ix.names)) * (accBytes + 1) // scratch: an acc and a flag per tool
	return n
}
