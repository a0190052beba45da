//go:build !js

package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Options tune a watched folder. Zero values take the defaults.
type Options struct {
	// Settle is how long a file's size and modification time must stay unchanged before it is
	// queued (default 3 s: scanner exports and network copies pause for less between writes).
	Settle time.Duration
	// Poll is how often pending files are looked at again (default Settle/4, at least 20 ms).
	Poll time.Duration
	// Existing queues the scans already in the folder when watching starts; otherwise they
	// count as seen (only new arrivals are analysed) and a note says how many there were.
	Existing bool
	// Now is the clock (default time.Now); tests give a fake one.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Settle <= 0 {
		o.Settle = 3 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = max(o.Settle/4, 20*time.Millisecond)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Folder is a running watch of one directory. Stop ends it.
type Folder struct {
	Dir    string
	stop   context.CancelFunc
	done   chan struct{}
	fsw    *fsnotify.Watcher
	closer sync.Once
}

// Start watches dir (not its subfolders). queue receives each scan's path once it has settled;
// note receives a sentence about each file ignored or skipped and about watch errors. Both are
// called from the watch's own goroutine, one call at a time.
func Start(ctx context.Context, dir string, opt Options, queue func(path string), note func(msg string)) (*Folder, error) {
	opt = opt.withDefaults()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("watch %s: not a folder", dir)
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	if err := fsw.Add(abs); err != nil {
		fsw.Close()
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &Folder{Dir: abs, stop: cancel, done: make(chan struct{}), fsw: fsw}
	t := newTracker(opt.Settle)

	// Files already there: listed after the watch is in place, so none slips between the two.
	entries, err := os.ReadDir(abs)
	if err != nil {
		cancel()
		fsw.Close()
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	now := opt.Now()
	existing := 0
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		p := filepath.Join(abs, e.Name())
		if opt.Existing {
			if msg := t.saw(p, now); msg != "" {
				note(msg)
			}
		} else if k := Classify(p); k == Scan || k == Archive {
			t.seen[p] = true
			existing++
		}
	}
	if existing > 0 {
		note(fmt.Sprintf("%d scan(s) already in %s were left alone; new scans arriving there will be analysed.", existing, abs))
	}

	go f.loop(ctx, t, opt, queue, note)
	return f, nil
}

func (f *Folder) loop(ctx context.Context, t *tracker, opt Options, queue func(string), note func(string)) {
	defer close(f.done)
	defer f.fsw.Close()
	tick := time.NewTicker(opt.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-f.fsw.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Write) || ev.Has(fsnotify.Chmod) {
				if msg := t.saw(ev.Name, opt.Now()); msg != "" {
					note(msg)
				}
			}
		case err, ok := <-f.fsw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Too many changes at once: events were lost, so look at the whole folder again.
				note("Many files changed at once in " + f.Dir + "; looking at the whole folder again.")
				if entries, err := os.ReadDir(f.Dir); err == nil {
					for _, e := range entries {
						if !e.IsDir() {
							t.saw(filepath.Join(f.Dir, e.Name()), opt.Now())
						}
					}
				}
				continue
			}
			note(fmt.Sprintf("Watching %s: %v", f.Dir, err))
		case <-tick.C:
			ready, notes := t.check(opt.Now())
			for _, n := range notes {
				note(n)
			}
			for _, p := range ready {
				queue(p)
			}
		}
	}
}

// Stop ends the watch and waits until no more callbacks come.
func (f *Folder) Stop() {
	f.closer.Do(func() { f.stop() })
	<-f.done
}

// candidate is a scan waiting for its size to settle.
type candidate struct {
	size    int64
	mod     time.Time
	changed time.Time // when size or modification time last changed
}

// tracker holds the settle rule apart from the file-system events, so that it can be tested
// with a fake clock.
type tracker struct {
	settle  time.Duration
	pending map[string]*candidate
	seen    map[string]bool // queued (or present at start): never queued again
	noted   map[string]bool // ignored files already mentioned
	stat    func(string) (os.FileInfo, error)
}

func newTracker(settle time.Duration) *tracker {
	return &tracker{settle: settle, pending: map[string]*candidate{}, seen: map[string]bool{}, noted: map[string]bool{}, stat: os.Stat}
}

// saw records that path was created or written at now, and returns a note when the file is
// ignored (said once per file).
func (t *tracker) saw(path string, now time.Time) string {
	base := filepath.Base(path)
	switch Classify(path) {
	case Partial:
		if t.noted[path] {
			return ""
		}
		t.noted[path] = true
		return fmt.Sprintf("Waiting: %s is a partial or temporary file; it is analysed once it has its final .nii or .nii.gz name.", base)
	case Other:
		if t.noted[path] {
			return ""
		}
		t.noted[path] = true
		if st, err := t.stat(path); err == nil && st.IsDir() {
			return ""
		}
		return fmt.Sprintf("Ignored: %s is not a NIfTI scan (.nii, .nii.gz) or a .zip of DICOM.", base)
	}
	if t.seen[path] {
		if t.noted[path] {
			return ""
		}
		t.noted[path] = true
		return fmt.Sprintf("%s changed after it was queued; it is not queued again (drop it on the window to analyse it anew).", base)
	}
	if _, ok := t.pending[path]; !ok {
		t.pending[path] = &candidate{size: -1, changed: now}
	}
	return ""
}

// check looks at every pending file and returns those whose size and modification time have
// not changed for the settle time (in name order), and notes about files that went away.
func (t *tracker) check(now time.Time) (ready, notes []string) {
	for p, c := range t.pending {
		st, err := t.stat(p)
		if err != nil {
			// Renamed or removed before it settled (a copy tool's temporary name, or a cancel).
			delete(t.pending, p)
			continue
		}
		if st.IsDir() {
			delete(t.pending, p)
			continue
		}
		if st.Size() != c.size || !st.ModTime().Equal(c.mod) {
			c.size, c.mod, c.changed = st.Size(), st.ModTime(), now
			continue
		}
		if now.Sub(c.changed) < t.settle {
			continue
		}
		delete(t.pending, p)
		if st.Size() == 0 {
			notes = append(notes, fmt.Sprintf("Ignored: %s is empty.", filepath.Base(p)))
			continue
		}
		t.seen[p] = true
		ready = append(ready, p)
	}
	sort.Strings(ready)
	sort.Strings(notes)
	return ready, notes
}
