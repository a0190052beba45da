package network

import "fyne.io/fyne/v2/widget"

func fyneCell(row, col int) widget.TableCellID { return widget.TableCellID{Row: row, Col: col} }
