package sorttable

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

// Columns sort numbers by value (not as text) before words and dashes, ascending then
// descending on a second tap; a tapped row reports its index in the rows given.
func TestSortAndSelect(t *testing.T) {
	test.NewTempApp(t)
	tb := New([]string{"Name", "z"}, []float32{100, 60})
	tb.SetRows([][]string{{"b", "10"}, {"a", "9"}, {"c", "—"}, {"D", "-2.5"}})
	join := func() string {
		var s []string
		for _, r := range tb.Shown() {
			s = append(s, r[0])
		}
		return strings.Join(s, "")
	}
	tb.HeaderTapped(1)
	if got := join(); got != "Dabc" || tb.HeaderText(1) != "z" || tb.HeaderSort(1) != 1 || SortIcon(1).Name() != theme.MenuDropUpIcon().Name() {
		t.Fatalf("by z ascending: %s (%s)", got, tb.HeaderText(1))
	}
	tb.HeaderTapped(1)
	if got := join(); got != "cbaD" || tb.HeaderText(1) != "z" || tb.HeaderSort(1) != -1 || SortIcon(-1).Name() != theme.MenuDropDownIcon().Name() || SortIcon(0) != nil {
		t.Fatalf("by z descending: %s", got)
	}
	tb.HeaderTapped(0)
	if got := join(); got != "abcD" {
		t.Fatalf("by name: %s", got)
	}
	var picked = -1
	tb.OnSelect = func(i int) { picked = i }
	tb.Table.Select(struct{ Row, Col int }{0, 0})
	if picked != 1 { // "a" was given second
		t.Fatalf("row 0 reported %d", picked)
	}
}
