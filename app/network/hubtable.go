package network

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/sorttable"
	"github.com/hubscope/hubscope/ipc"
)

// Column is one column of the hub table.
type Column struct {
	Title string
	Width float32
	text  func(rank int, h ipc.Hub) string
	less  func(a, b ipc.Hub) int
}

// Columns of the hub table, in display order. Rank is the hub's place by degree in the
// helper's list (strongest first), kept with the hub when the table is sorted or filtered.
var Columns = []Column{
	{"Rank", 50, func(r int, _ ipc.Hub) string { return strconv.Itoa(r) }, nil},
	{"Region", 190, func(_ int, h ipc.Hub) string { return regionText(h) }, func(a, b ipc.Hub) int {
		return cmp.Compare(strings.ToLower(regionText(a)), strings.ToLower(regionText(b)))
	}},
	{"x mm", 55, func(_ int, h ipc.Hub) string { return fmt.Sprintf("%.0f", h.MNI[0]) }, func(a, b ipc.Hub) int { return cmp.Compare(a.MNI[0], b.MNI[0]) }},
	{"y mm", 55, func(_ int, h ipc.Hub) string { return fmt.Sprintf("%.0f", h.MNI[1]) }, func(a, b ipc.Hub) int { return cmp.Compare(a.MNI[1], b.MNI[1]) }},
	{"z mm", 55, func(_ int, h ipc.Hub) string { return fmt.Sprintf("%.0f", h.MNI[2]) }, func(a, b ipc.Hub) int { return cmp.Compare(a.MNI[2], b.MNI[2]) }},
	{"Degree", 70, func(_ int, h ipc.Hub) string { return strconv.Itoa(h.Degree) }, func(a, b ipc.Hub) int { return cmp.Compare(a.Degree, b.Degree) }},
	{"Strength", 80, func(_ int, h ipc.Hub) string { return fmt.Sprintf("%.1f", h.Strength) }, func(a, b ipc.Hub) int { return cmp.Compare(a.Strength, b.Strength) }},
	{"Hub z", 60, func(_ int, h ipc.Hub) string { return fmt.Sprintf("%.2f", h.HubZ) }, func(a, b ipc.Hub) int { return cmp.Compare(a.HubZ, b.HubZ) }},
	{"Module", 65, func(_ int, h ipc.Hub) string { return moduleText(h) }, func(a, b ipc.Hub) int { return cmp.Compare(a.Module, b.Module) }},
	{"Participation", 95, func(_ int, h ipc.Hub) string { return participationText(h) }, func(a, b ipc.Hub) int { return cmp.Compare(participation(a), participation(b)) }},
	{"Role", 85, func(_ int, h ipc.Hub) string { return h.Role }, func(a, b ipc.Hub) int { return cmp.Compare(a.Role, b.Role) }},
}

// ColRank … ColRole index Columns.
const (
	ColRank = iota
	ColRegion
	ColX
	ColY
	ColZ
	ColDegree
	ColStrength
	ColHubZ
	ColModule
	ColParticipation
	ColRole
)

func regionText(h ipc.Hub) string {
	if h.Region == "" {
		return "outside the atlas"
	}
	return h.Region
}

func moduleText(h ipc.Hub) string {
	if h.Module == 0 {
		return ""
	}
	return strconv.Itoa(h.Module)
}

func participation(h ipc.Hub) float64 {
	if h.Participation == nil {
		return -1
	}
	return *h.Participation
}

func participationText(h ipc.Hub) string {
	if h.Participation == nil {
		return ""
	}
	return fmt.Sprintf("%.2f", *h.Participation)
}

type rankedHub struct {
	rank int
	hub  ipc.Hub
}

// HubTable is the sortable, filterable table of a result's hubs. Methods are for the UI
// goroutine.
type HubTable struct {
	Table  *widget.Table
	Filter *widget.Entry
	Count  *widget.Label
	// OnSelect is called with the hub of a tapped row.
	OnSelect func(ipc.Hub)

	mu     sync.Mutex // guards shown against readers off the UI goroutine (smoke dump, export)
	all    []rankedHub
	shown  []rankedHub
	col    int
	desc   bool
	filter string
}

// NewHubTable shows hubs (strongest first, as in ipc.Summary.Hubs).
func NewHubTable(hubs []ipc.Hub) *HubTable {
	h := &HubTable{col: ColRank}
	for i, hub := range hubs {
		h.all = append(h.all, rankedHub{i + 1, hub})
	}
	h.Table = widget.NewTableWithHeaders(
		func() (int, int) { return len(h.shown), len(Columns) },
		func() fyne.CanvasObject { return widget.NewLabel("Frontal_Sup_Medial_L") },
		func(id widget.TableCellID, o fyne.CanvasObject) {
			if id.Row < len(h.shown) {
				r := h.shown[id.Row]
				o.(*widget.Label).SetText(Columns[id.Col].text(r.rank, r.hub))
			}
		})
	h.Table.ShowHeaderColumn = false
	h.Table.CreateHeader = func() fyne.CanvasObject { return sorttable.NewHeaderButton("Participation") }
	h.Table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		b := o.(*widget.Button)
		if id.Col < 0 {
			return
		}
		b.SetText(h.HeaderText(id.Col))
		b.SetIcon(sorttable.SortIcon(h.HeaderSort(id.Col)))
		col := id.Col
		b.OnTapped = func() { h.HeaderTapped(col) }
	}
	for i, c := range Columns {
		h.Table.SetColumnWidth(i, c.Width+sorttable.HeaderIconRoom)
	}
	h.Table.OnSelected = func(id widget.TableCellID) {
		if id.Row >= 0 && id.Row < len(h.shown) && h.OnSelect != nil {
			h.OnSelect(h.shown[id.Row].hub)
		}
	}
	h.Filter = widget.NewEntry()
	h.Filter.SetPlaceHolder("Filter by region, e.g. Frontal or Precuneus")
	h.Filter.OnChanged = h.SetFilter
	h.Count = widget.NewLabel("")
	h.apply()
	return h
}

// HeaderText is a column's header title; HeaderSort says how the table is sorted by it (the
// header's icon, sorttable.SortIcon).
func (h *HubTable) HeaderText(col int) string { return Columns[col].Title }

// HeaderSort is how the table is sorted by col: +1 ascending, -1 descending, 0 not by it.
func (h *HubTable) HeaderSort(col int) int {
	switch {
	case col != h.col:
		return 0
	case h.desc:
		return -1
	}
	return 1
}

// HeaderTapped sorts by col; tapping the sorted column again reverses the order. Quantities
// sort largest first on the first tap (what a reader looks for), names and rank A→Z / 1→n.
func (h *HubTable) HeaderTapped(col int) {
	if col == h.col {
		h.SortBy(col, !h.desc)
		return
	}
	h.SortBy(col, col != ColRank && col != ColRegion && col != ColRole)
}

// SortBy orders the rows by a column; ties keep the rank order.
func (h *HubTable) SortBy(col int, descending bool) {
	if col < 0 || col >= len(Columns) {
		return
	}
	h.col, h.desc = col, descending
	h.apply()
}

// SetFilter keeps the rows whose region name contains text (case-insensitive; "" keeps all).
func (h *HubTable) SetFilter(text string) {
	h.filter = strings.TrimSpace(text)
	h.apply()
}

func (h *HubTable) apply() {
	f := strings.ToLower(h.filter)
	var shown []rankedHub
	for _, r := range h.all {
		if f == "" || strings.Contains(strings.ToLower(regionText(r.hub)), f) {
			shown = append(shown, r)
		}
	}
	less := Columns[h.col].less
	slices.SortStableFunc(shown, func(a, b rankedHub) int {
		c := 0
		if less != nil {
			c = less(a.hub, b.hub)
		}
		if c == 0 {
			c = cmp.Compare(a.rank, b.rank)
		}
		if h.desc {
			return -c
		}
		return c
	})
	h.mu.Lock()
	h.shown = shown
	h.mu.Unlock()
	if len(shown) == len(h.all) {
		h.Count.SetText(fmt.Sprintf("%d hubs", len(h.all)))
	} else {
		h.Count.SetText(fmt.Sprintf("%d of %d hubs match %q", len(shown), len(h.all), h.filter))
	}
	h.Table.Refresh()
}

// Shown returns the hubs as displayed (filtered and sorted).
func (h *HubTable) Shown() []ipc.Hub {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]ipc.Hub, len(h.shown))
	for i, r := range h.shown {
		out[i] = r.hub
	}
	return out
}

// Write writes the displayed rows with a header line, comma- or tab-separated (sep), plus the
// voxel's grid indices so a row can be found in the maps.
func (h *HubTable) Write(w io.Writer, sep rune) error {
	h.mu.Lock()
	rows := slices.Clone(h.shown)
	h.mu.Unlock()
	cw := csv.NewWriter(w)
	cw.Comma = sep
	head := make([]string, 0, len(Columns)+3)
	for _, c := range Columns {
		head = append(head, c.Title)
	}
	head = append(head, "i", "j", "k")
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, r := range rows {
		rec := make([]string, 0, len(head))
		for _, c := range Columns {
			rec = append(rec, c.text(r.rank, r.hub))
		}
		rec = append(rec, strconv.Itoa(r.hub.Voxel[0]), strconv.Itoa(r.hub.Voxel[1]), strconv.Itoa(r.hub.Voxel[2]))
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ExportCSV writes the displayed rows to path as CSV.
func (h *HubTable) ExportCSV(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("export hub table: %w", err)
	}
	if err := h.Write(f, ','); err != nil {
		f.Close()
		return fmt.Errorf("export hub table to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("export hub table to %s: %w", path, err)
	}
	return nil
}
