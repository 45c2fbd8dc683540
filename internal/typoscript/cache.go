package typoscript

import (
	"container/list"
	"io/fs"
	"sync"
)

// FileCacheParams bounds a FileCache; zero fields take the defaults.
type FileCacheParams struct {
	// MaxEntries caps the cached files and directory listings (default
	// 4096; bootstrap_package with the core extensions needs about 250).
	MaxEntries int
	// MaxBytes caps the summed size of the cached file contents (default
	// 64 MiB); their parsed lines take a few times as much again.
	MaxBytes int
}

// FileCache keeps the include files Builders read, read and tokenized,
// and the directory listings of @import globs and directories, across
// builds, so a resolution does not open, read and tokenize every file of
// an installation again. An entry is keyed by the file's absolute path and
// stamped with its size and modification time; every build stats each
// file it uses once and re-reads it when the stamp differs, so a change on
// disk counts from the next build. (A change that keeps both size and
// modification time, within the file system's timestamp granularity, is
// not noticed: the price of not reading every file.) The cache holds at
// most MaxEntries entries and MaxBytes of content, dropping the least
// recently used.
//
// Only what a Builder read through its os.Root (so from inside the
// extension or project directory) is ever stored, and an entry is served
// only after the same path stats to the same stamp, so the cache never
// widens what a Builder may read.
//
// Concurrency: a FileCache is safe for concurrent use by any number of
// Builders. Entries are immutable once stored (a Builder never changes the
// Lines it is given, and a re-read replaces an entry rather than changing
// it), so builds share them without copying. One build validates each
// path once and keeps what it saw, so it works on one version of every
// file even while the file changes.
type FileCache struct {
	maxEntries, maxBytes int

	mu    sync.Mutex
	lru   *list.List // of *cacheEntry, most recently used first
	byKey map[string]*list.Element
	bytes int
}

// NewFileCache returns an empty cache bounded by p.
func NewFileCache(p FileCacheParams) *FileCache {
	if p.MaxEntries <= 0 {
		p.MaxEntries = 4096
	}
	if p.MaxBytes <= 0 {
		p.MaxBytes = 64 << 20
	}
	return &FileCache{maxEntries: p.MaxEntries, maxBytes: p.MaxBytes, lru: list.New(), byKey: map[string]*list.Element{}}
}

// Len is the number of cached files and listings.
func (c *FileCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Bytes is the summed size of the cached file contents.
func (c *FileCache) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// stamp is what decides that a path still holds what was cached.
type stamp struct {
	size    int64
	modTime int64 // UnixNano
	mode    fs.FileMode
}

func stampOf(fi fs.FileInfo) stamp {
	return stamp{size: fi.Size(), modTime: fi.ModTime().UnixNano(), mode: fi.Mode().Type()}
}

// tokenKey holds the limits a tokenization depends on besides MaxLines.
type tokenKey struct{ maxSource, maxValue, maxDepth int }

func tokenKeyOf(l Limits) tokenKey {
	return tokenKey{maxSource: l.MaxSourceBytes, maxValue: l.MaxValueBytes, maxDepth: l.MaxDepth}
}

// cacheEntry is one file (src, and lines once tokenized) or one directory
// listing (ents). It is never changed after it is stored.
type cacheEntry struct {
	key   string
	stamp stamp
	src   string
	// lines were tokenized with tok and a budget of maxLines lines; cut
	// tells that the budget ran out, so they are reusable only under the
	// same key and with more budget than they used.
	lines    []Line
	tok      tokenKey
	maxLines int
	cut      bool
	ents     []dirEntry
}

// linesFor returns the cached tokenization when tokenizing again under lim
// with budget lines left would give the same lines.
func (e *cacheEntry) linesFor(lim Limits, budget int) ([]Line, bool) {
	if e.lines == nil || e.tok != tokenKeyOf(lim) {
		return nil, false
	}
	if e.cut || len(e.lines) >= budget {
		return nil, false
	}
	return e.lines, true
}

// get returns the entry of key when it carries stamp st.
func (c *FileCache) get(key string, st stamp) *cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil
	}
	e := el.Value.(*cacheEntry)
	if e.stamp != st {
		return nil
	}
	c.lru.MoveToFront(el)
	return e
}

// put stores e, replacing any entry of its key, and evicts the least
// recently used entries beyond the bounds. An entry larger than MaxBytes
// on its own is not stored.
func (c *FileCache) put(e *cacheEntry) {
	if len(e.src) > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[e.key]; ok {
		c.bytes -= len(el.Value.(*cacheEntry).src)
		c.lru.Remove(el)
	}
	c.byKey[e.key] = c.lru.PushFront(e)
	c.bytes += len(e.src)
	for c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes {
		last := c.lru.Back()
		old := last.Value.(*cacheEntry)
		c.lru.Remove(last)
		delete(c.byKey, old.key)
		c.bytes -= len(old.src)
	}
}
