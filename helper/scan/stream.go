package scan

import (
	"context"
	"sync"

	"github.com/hubscope/hubscope/helper/nifti"
)

// streamDepth is how many decoded volumes may wait for the consumer: decoding (inflating
// gzip, converting the datatype) runs on its own goroutine while the consumer gathers the
// masked voxels and transposes them, so the two overlap on a machine with two cores.
const streamDepth = 2

// volume is one decoded volume, or the error that ended the stream.
type volume[D float32 | float64] struct {
	data []D
	err  error
}

// volumeStream reads the volumes of r in file order on a producer goroutine, through a ring
// of streamDepth+1 buffers of n values. The consumer takes volumes from next and hands each
// buffer back with release once it is done with it; close stops the producer and waits for
// it, after which r may be closed.
type volumeStream[D float32 | float64] struct {
	out  chan volume[D]
	free chan []D
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// readUpTo is how many volumes of the file are read to stream the selection sel (nil: the
// first count in order): up to and including the last one selected.
func readUpTo(sel []int, count int) int {
	if len(sel) == 0 {
		return count
	}
	return sel[len(sel)-1] + 1
}

// streamVolumes streams count volumes of r: the first count in file order, or the volumes
// sel names (increasing, from SelectVolumes), decoding and passing over the others.
func streamVolumes[D float32 | float64](ctx context.Context, r *nifti.Reader, n int, sel []int, count int) *volumeStream[D] {
	s := &volumeStream[D]{
		out:  make(chan volume[D], streamDepth),
		free: make(chan []D, streamDepth+1),
		stop: make(chan struct{}),
	}
	for range streamDepth + 1 {
		s.free <- make([]D, n)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(s.out)
		file := 0 // the file's next volume
		for t := 0; t < count; t++ {
			var buf []D
			select {
			case buf = <-s.free:
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			}
			var err error
			for read := true; read; {
				switch b := any(buf).(type) {
				case []float32:
					err = r.ReadVolume(b)
				case []float64:
					err = r.ReadVolume64(b)
				}
				// Volumes before the next selected one are read into the same buffer and
				// passed over (a gzip stream cannot skip ahead).
				read = sel != nil && err == nil && file < sel[t]
				file++
			}
			select {
			case s.out <- volume[D]{buf, err}:
			case <-s.stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// next returns the next volume; ok is false when the producer stopped (cancelled) early.
func (s *volumeStream[D]) next() (v volume[D], ok bool) {
	v, ok = <-s.out
	return v, ok
}

func (s *volumeStream[D]) release(buf []D) { s.free <- buf }

func (s *volumeStream[D]) close() {
	s.once.Do(func() { close(s.stop) })
	s.wg.Wait()
}
