package jobs

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/ipc"
)

// RowView draws one job: name and state, stage, progress bar and time left, open and cancel
// buttons, and a line for the engine's note or the job's problem in words.
type RowView struct {
	widget.BaseWidget
	Name, State, Stage, ETA *widget.Label
	Bar                     *widget.ProgressBar
	Open, Cancel            *widget.Button
	// Note shows the engine's latest note, or the job's problem in words (in the error colour).
	Note *widget.Label
	// Beside names the stages running beside the current one (shown only while there are).
	Beside *widget.Label

	list *List
	id   string
	job  ipc.Job
}

func newRowView(l *List) *RowView {
	v := &RowView{
		Name:  widget.NewLabelWithStyle("sub-01_task-rest_bold.nii.gz", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		State: widget.NewLabel("Interrupted"),
		Stage: widget.NewLabel("correlation"),
		ETA:   widget.NewLabel("about 10 min left"),
		Bar:   widget.NewProgressBar(),
		Note:  widget.NewLabel(""),
		list:  l,
	}
	v.Beside = widget.NewLabel("")
	v.Beside.Truncation = fyne.TextTruncateEllipsis
	v.Beside.Importance = widget.LowImportance
	v.Beside.Hide()
	v.Note.Truncation = fyne.TextTruncateEllipsis
	v.Name.Truncation = fyne.TextTruncateEllipsis
	v.Open = widget.NewButtonWithIcon("Open", theme.FolderOpenIcon(), func() {
		if v.job.State == ipc.JobDone && v.list.OnOpen != nil {
			v.list.OnOpen(v.job)
		}
	})
	v.Cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), func() {
		if v.id != "" && !v.job.State.Terminal() {
			v.Cancel.Disable()
			v.list.Cancel(v.id)
		}
	})
	v.ExtendBaseWidget(v)
	return v
}

// CreateRenderer lays the row out.
func (v *RowView) CreateRenderer() fyne.WidgetRenderer {
	top := container.NewBorder(nil, nil, nil, container.NewHBox(v.State, v.Open, v.Cancel), v.Name)
	mid := container.NewBorder(nil, nil, v.Stage, v.ETA, v.Bar)
	return widget.NewSimpleRenderer(container.NewVBox(top, mid, v.Beside, v.Note))
}

func (v *RowView) show(r Row) {
	v.id, v.job = r.Job.ID, r.Job
	j := r.Job
	v.Name.SetText(j.Name)
	v.State.SetText(StateText(j.State))
	stage := j.Stage
	switch j.State {
	case ipc.JobQueued:
		stage = "waiting for the helper"
	case ipc.JobDone:
		stage = "complete"
	}
	if j.State.Terminal() && j.State != ipc.JobDone {
		stage = ""
	}
	v.Stage.SetText(stage)
	if b := BesideText(j); b != "" && j.State == ipc.JobRunning {
		v.Beside.SetText(b)
		v.Beside.Show()
	} else {
		v.Beside.SetText("")
		v.Beside.Hide()
	}
	v.Bar.SetValue(j.Fraction)
	if j.State == ipc.JobDone {
		v.Bar.SetValue(1)
	}
	if j.State == ipc.JobRunning {
		v.ETA.SetText(ETAText(j.ETASeconds))
	} else {
		v.ETA.SetText("")
	}
	if j.State == ipc.JobDone {
		v.Open.Enable()
	} else {
		v.Open.Disable()
	}
	if j.State.Terminal() {
		v.Cancel.Disable()
	} else {
		v.Cancel.Enable()
	}
	v.Note.Importance = widget.MediumImportance
	switch p := Problem(j); {
	case p == "":
		v.Note.SetText(r.Note)
	case j.State == ipc.JobCancelled:
		v.Note.Importance = widget.LowImportance
		v.Note.SetText(p)
	default:
		v.Note.Importance = widget.DangerImportance
		v.Note.SetText(p)
	}
}
