//go:build cuda

package cuda

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// ComponentLabels implements fc.RowComponents: the connected components of the kept edges,
// found where the edges are (components_init, one components_hook per row panel,
// components_flatten: ECL-CC union–find), so the driver's isolated-node and giant-component
// figures need no pass over the network on the host (W2: 0.03 s there on 16 cores, W3 0.7 s).
// Only N labels cross the bus.
func (re *rowEdges) ComponentLabels() ([]uint32, error) {
	b := re.b
	n := len(re.deg)
	labels := make([]uint32, n)
	if n == 0 {
		return labels, nil
	}
	err := b.do(func() (err error) {
		defer func() {
			if err != nil {
				b.drain()
			}
		}()
		st := b.slots[0].stream
		// per node: degree, row start within its panel, parent
		tables, err := re.deviceRows(st, "component tables", 1)
		if err != nil {
			return err
		}
		defer cu.MemFree(tables)
		deg, start, parent := tables, at32(tables, n), at32(tables, 2*n)
		if err := b.fn.componentsInitLaunch(st, parent, n); err != nil {
			return err
		}
		for _, p := range re.panels {
			if p.count > 0 {
				if err := b.fn.componentsHookLaunch(st, p.keys, at32(start, p.i0), at32(deg, p.i0), p.i1-p.i0, p.i0, parent); err != nil {
					return err
				}
			}
		}
		if err := b.fn.componentsFlattenLaunch(st, parent, n); err != nil {
			return err
		}
		if err := st.Synchronize(); err != nil {
			return fmt.Errorf("cuda backend: connected components of the kept edges: %w", err)
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&labels[0]), parent, int64(4*n)); err != nil {
			return fmt.Errorf("cuda backend: copying the component labels: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return labels, nil
}
