// Package sorttable is a small sortable table for HubScope's result tabs (the norm comparison's
// hubs lost and gained, a sweep's thresholds): text cells under header buttons that sort by
// their column (numbers as numbers, "—" and other words after them), and a row callback.
package sorttable

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Table shows rows of text under column titles. Its methods are for the UI goroutine.
type Table struct {
	*widget.Table
	// OnSelect is called with the index (into the rows given to SetRows) of a tapped row.
	OnSelect func(row int)

	titles []string
	rows   [][]string
	order  []int // display order: indices into rows
	col    int   // sorted column, -1 for the given order
	desc   bool
}

// New returns an empty table with these column titles and widths.
func New(titles []string, widths []float32) *Table {
	t := &Table{titles: titles, col: -1}
	t.Table = widget.NewTableWithHeaders(
		func() (int, int) { return len(t.order), len(t.titles) },
		func() fyne.CanvasObject { return widget.NewLabel("Frontal_Sup_Medial_L") },
		func(id widget.TableCellID, o fyne.CanvasObject) {
			if id.Row < len(t.order) && id.Col < len(t.rows[t.order[id.Row]]) {
				o.(*widget.Label).SetText(t.rows[t.order[id.Row]][id.Col])
			}
		})
	t.Table.ShowHeaderColumn = false
	t.Table.CreateHeader = func() fyne.CanvasObject { return NewHeaderButton("Participation") }
	t.Table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Col < 0 {
			return
		}
		b := o.(*widget.Button)
		b.SetText(t.HeaderText(id.Col))
		b.SetIcon(SortIcon(t.HeaderSort(id.Col)))
		col := id.Col
		b.OnTapped = func() { t.HeaderTapped(col) }
	}
	for i, w := range widths {
		t.Table.SetColumnWidth(i, w+HeaderIconRoom)
	}
	t.Table.OnSelected = func(id widget.TableCellID) {
		if id.Row >= 0 && id.Row < len(t.order) && t.OnSelect != nil {
			t.OnSelect(t.order[id.Row])
		}
	}
	return t
}

// SetRows replaces the rows (one text per column), keeping the sort.
func (t *Table) SetRows(rows [][]string) {
	t.rows = rows
	t.order = make([]int, len(rows))
	for i := range t.order {
		t.order[i] = i
	}
	t.sort()
}

// Len is the number of rows.
func (t *Table) Len() int { return len(t.rows) }

// Shown returns the rows in display order.
func (t *Table) Shown() [][]string {
	out := make([][]string, len(t.order))
	for i, r := range t.order {
		out[i] = t.rows[r]
	}
	return out
}

// HeaderText is a column's title.
func (t *Table) HeaderText(col int) string { return t.titles[col] }

// HeaderSort is how a column is sorted: +1 ascending, -1 descending, 0 not sorted by it.
func (t *Table) HeaderSort(col int) int {
	switch {
	case col != t.col:
		return 0
	case t.desc:
		return -1
	}
	return 1
}

// SortIcon is the header button's icon for HeaderSort's answer: an up or down triangle, nil
// for an unsorted column. Icons, not the characters ▲ and ▼: the app's font (Fyne's Noto
// Sans) lacks those, and the browser, which has no system fonts to fall back on, drew boxes.
func SortIcon(sort int) fyne.Resource {
	switch sort {
	case 1:
		return theme.MenuDropUpIcon()
	case -1:
		return theme.MenuDropDownIcon()
	}
	return nil
}

// HeaderIconRoom is the width a column gains for its header's sort icon.
const HeaderIconRoom = 16

// NewHeaderButton is a header cell: the title with the sort icon after it.
func NewHeaderButton(title string) *widget.Button {
	b := widget.NewButtonWithIcon(title, theme.MenuDropDownIcon(), nil)
	b.IconPlacement = widget.ButtonIconTrailingText
	return b
}

// HeaderTapped sorts by col, ascending; again, descending.
func (t *Table) HeaderTapped(col int) {
	if col == t.col {
		t.SortBy(col, !t.desc)
	} else {
		t.SortBy(col, false)
	}
}

// SortBy sorts the rows by column col (descending when desc).
func (t *Table) SortBy(col int, desc bool) {
	t.col, t.desc = col, desc
	t.sort()
}

func (t *Table) sort() {
	if t.col >= 0 {
		col, desc := t.col, t.desc
		slices.SortStableFunc(t.order, func(a, b int) int {
			c := compare(cell(t.rows[a], col), cell(t.rows[b], col))
			if desc {
				c = -c
			}
			return c
		})
	}
	t.Table.Refresh()
}

func cell(row []string, col int) string {
	if col < len(row) {
		return row[col]
	}
	return ""
}

// compare orders numbers by value before words, words by their lower case.
func compare(a, b string) int {
	x, errA := strconv.ParseFloat(strings.TrimSpace(a), 64)
	y, errB := strconv.ParseFloat(strings.TrimSpace(b), 64)
	okA, okB := errA == nil && !math.IsNaN(x), errB == nil && !math.IsNaN(y)
	switch {
	case okA && okB:
		return cmp.Compare(x, y)
	case okA:
		return -1
	case okB:
		return 1
	}
	return cmp.Compare(strings.ToLower(a), strings.ToLower(b))
}
